// What whereami and the samples do inside signal handlers, in C: a handler may call only async-signal-safe
// functions (man 7 signal-safety), and Swift code gives no such promise (it may allocate, lock or retain).
#ifndef PROCESS_END_H
#define PROCESS_END_H

#include <stdbool.h>
#include <termios.h>

/// Catches `signal` (SIGINT, SIGTERM, SIGHUP) with a handler that only writes the signal's number, one byte, to
/// `wake_fd` (a non-blocking pipe): the thread reading the pipe decides what it means. A signal ignored when the
/// process started (nohup's SIGHUP, a background job's SIGINT) stays ignored. Returns 0, or -1 with errno.
int process_end_catch(int signal, int wake_fd);

/// The terminal as `whereami --watch` set it up, for the handlers to put back: `saved` (standard input's modes
/// before raw mode; NULL if they were not changed) and whether the alternate screen is on with the cursor hidden.
/// `output_fd` is the descriptor the restoring text goes to, written only if poll(2) says it takes it at once, so
/// a stalled terminal never holds a crashing process. Call before changing the terminal, so that no moment is left
/// uncovered.
void process_end_terminal_changed(const struct termios *saved, bool alternate_screen, int output_fd);

/// The terminal is as it was: nothing for the handlers to put back.
void process_end_terminal_restored(void);

/// Puts the terminal back if it is changed (standard input's modes with TCSANOW, then CAN, the cursor shown and
/// the normal screen back, if the terminal takes them at once), once: async-signal-safe, for handlers and for an
/// end that cannot wait.
void process_end_restore_terminal(void);

/// Installs, once, handlers for the signals that end a process abnormally but can be caught: SIGSEGV, SIGBUS,
/// SIGILL, SIGTRAP, SIGABRT, SIGFPE, SIGQUIT and SIGSYS, and, while their action is the default, the other signals
/// whose default ends a process (SIGALRM, SIGUSR1, SIGUSR2, SIGPROF, SIGVTALRM, SIGXCPU, SIGXFSZ, SIGPWR,
/// SIGSTKFLT, SIGIO, the real-time signals). Each puts the terminal back, then gives the signal to the handler
/// that was there before (Swift's backtracer, or the default action): a fault (SIGSEGV, SIGBUS, SIGILL, SIGFPE,
/// a SIGTRAP that stays on its instruction) is left to happen again as the handler returns; any other signal is
/// passed to that handler at once, then ends the process by its default action (Swift's backtracer returns from a
/// signal it did not cause). A signal ignored stays ignored. An exit(3) while the terminal is changed puts it back
/// too (atexit). Returns 0, or -1 with errno.
int process_end_catch_crashes(void);

/// Ends the process by `signal`'s default action after putting the terminal back: for an end that did not come
/// in time. Does not return.
_Noreturn void process_end_by_signal(int signal);

#endif
