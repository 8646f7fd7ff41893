package worker

import "errors"

// shouldStopRetries is the exception handler's shouldStopRetries of Laravel 13.17+: an exception
// whose class the application lists with dontRetry (Config.DontRetry) fails the job at once instead
// of releasing it. A Go error names its PHP class with a PHPClass method, anywhere in its chain; the
// class must be listed as it is, since PHP's instanceof of subclasses cannot be seen from Go.
func (w *Worker) shouldStopRetries(err error) bool {
	if len(w.cfg.DontRetry) == 0 || !w.version.AtLeast(13, 17) {
		return false
	}
	for e := err; e != nil; e = errors.Unwrap(e) {
		if c, ok := e.(phpClasser); ok && w.cfg.DontRetry[c.PHPClass()] {
			return true
		}
	}
	return false
}
