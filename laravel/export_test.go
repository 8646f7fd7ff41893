package laravel

// WaitFloorProbes waits for the probes below the claims' lower bounds (see idFloors) running on c, so
// that a test sees their outcome at a known point.
func WaitFloorProbes(c *Conn) { c.floors.wait() }
