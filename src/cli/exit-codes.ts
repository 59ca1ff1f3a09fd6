// The exit codes a tapedeck command ends with beyond 0 (fine), 1 (a finding) and 2 (bad input).
/** A replay (or a bisect probe's replay) stopped by its watchdog: as GNU timeout(1) exits. */
export const EXIT_TIMED_OUT = 124;
/** Stopped by SIGINT / SIGTERM / SIGHUP to tapedeck: 128 + SIGINT, as a shell reports Ctrl-C. */
export const EXIT_INTERRUPTED = 130;
