package payload

// UniqueLockKey returns the cache key (without the store prefix) of a ShouldBeUnique job's lock for the
// given Laravel version: "laravel_unique_job:" + class + uniqueId (8–10), with a ":" before the id from
// 11.0, and from 12.41 the class segment is the job's own displayName when it defines one. hashName is
// applied to that displayName from 12.54 (Laravel hashes it with xxh128); pass nil when unavailable and
// ok is false for that case.
func UniqueLockKey(v Version, class, displayName string, definesDisplayName bool, uniqueID string, hashName func(string) string) (key string, ok bool) {
	segment := class
	if definesDisplayName && v.AtLeast(12, 41) {
		segment = displayName
		if v.AtLeast(12, 54) {
			if hashName == nil {
				return "", false
			}
			segment = hashName(displayName)
		}
	}
	if v.AtLeast(11, 0) {
		return "laravel_unique_job:" + segment + ":" + uniqueID, true
	}
	return "laravel_unique_job:" + segment + uniqueID, true
}
