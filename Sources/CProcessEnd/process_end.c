#define _GNU_SOURCE
#include "process_end.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

// MARK: - SIGINT, SIGTERM, SIGHUP: a byte on a pipe

static atomic_int end_wake_fd = -1;

static void on_end_signal(int signal) {
    int saved = errno;
    unsigned char byte = (unsigned char)signal;
    // Non-blocking: a pipe already full of signals has told the reader enough.
    (void)!write(atomic_load(&end_wake_fd), &byte, 1);
    errno = saved;
}

int process_end_catch(int signal, int wake_fd) {
    atomic_store(&end_wake_fd, wake_fd);
    // A signal ignored from the start stays ignored: nohup's SIGHUP, a background job's SIGINT.
    struct sigaction current;
    if (sigaction(signal, NULL, &current) != 0) return -1;
    if (!(current.sa_flags & SA_SIGINFO) && current.sa_handler == SIG_IGN) return 0;
    struct sigaction action;
    memset(&action, 0, sizeof(action));
    action.sa_handler = on_end_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    return sigaction(signal, &action, NULL);
}

// MARK: - The terminal, as the handlers put it back

// Written by the thread that changes the terminal, read by a handler on any thread: the modes are stored before
// `changed` is released, and read after it is acquired.
static struct termios saved_modes;
static atomic_bool has_saved_modes;
static atomic_bool on_alternate_screen;
static atomic_int terminal_output = -1;
static atomic_bool changed;

void process_end_terminal_changed(const struct termios *saved, bool alternate_screen, int output_fd) {
    atomic_store(&changed, false);
    if (saved != NULL) saved_modes = *saved;
    atomic_store(&has_saved_modes, saved != NULL);
    atomic_store(&on_alternate_screen, alternate_screen);
    atomic_store(&terminal_output, output_fd);
    atomic_store_explicit(&changed, true, memory_order_release);
}

void process_end_terminal_restored(void) {
    atomic_store(&changed, false);
}

void process_end_restore_terminal(void) {
    // Once: the first of a handler and the thread's own restore that gets here does it.
    if (!atomic_exchange_explicit(&changed, false, memory_order_acq_rel)) return;
    int saved = errno;
    if (atomic_load(&has_saved_modes)) (void)tcsetattr(STDIN_FILENO, TCSANOW, &saved_modes);
    if (atomic_load(&on_alternate_screen)) {
        // CAN first: it cancels an escape sequence that a frame cut short left open, which would swallow ours.
        static const char text[] = "\x18\x1b[?25h\x1b[?1049l";
        // Only if the terminal takes it now: the descriptor may block (the terminal could not be opened again
        // without blocking), and a terminal that takes nothing must not hold a crashing or ending process.
        struct pollfd output = { .fd = atomic_load(&terminal_output), .events = POLLOUT, .revents = 0 };
        if (poll(&output, 1, 0) == 1 && (output.revents & POLLOUT)) {
            (void)!write(output.fd, text, sizeof(text) - 1);
        }
    }
    errno = saved;
}

// MARK: - Crashes

static const int crash_signals[] = { SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGABRT, SIGFPE, SIGQUIT, SIGSYS };
// The other signals whose default action ends a process (SIGINT, SIGTERM and SIGHUP are the end request's),
// caught only while they have it: a handler someone else installed stays theirs.
static const int ending_signals[] = {
    SIGALRM, SIGUSR1, SIGUSR2, SIGPROF, SIGVTALRM, SIGXCPU, SIGXFSZ, SIGPWR, SIGSTKFLT, SIGIO,
};
static struct sigaction previous_actions[NSIG];
static atomic_bool crashes_caught;

/// Whether `signal` with `info` is a fault that happens again when the handler returns: its instruction runs
/// again. A signal sent (kill, abort: a code of 0 or less) is not, nor one the kernel sends of its own (SI_KERNEL:
/// a timer's SIGALRM or SIGPROF, RLIMIT_CPU's SIGXCPU, seccomp's SIGSYS, x86's int3, whose SIGTRAP comes after
/// the instruction), but for SIGSEGV, SIGBUS, SIGILL and SIGFPE, whose SI_KERNEL (x86's general protection
/// fault) is a fault too.
static bool faults_again(int signal, const siginfo_t *info) {
    if (info == NULL || info->si_code <= 0) return false;
    switch (signal) {
    case SIGSEGV: case SIGBUS: case SIGILL: case SIGFPE: return true;
    case SIGTRAP: return info->si_code != SI_KERNEL;   // arm64's brk (a Swift trap) stays on its instruction
    default: return false;
    }
}

static void on_crash(int signal, siginfo_t *info, void *context) {
    int saved = errno;
    process_end_restore_terminal();
    struct sigaction previous = previous_actions[signal];
    (void)sigaction(signal, &previous, NULL);
    if (faults_again(signal, info)) {
        // Happens again as this handler returns: the previous handler (Swift's backtracer) then sees the fault
        // itself, its address and registers.
        errno = saved;
        return;
    }
    // Anything else is given to the previous handler now (Swift's backtracer returns from a signal it did not
    // cause, and the process would go on), then ends the process by its default action: raised, blocked while
    // this handler runs, it is delivered as this one returns.
    if (previous.sa_flags & SA_SIGINFO) {
        if (previous.sa_sigaction != NULL) previous.sa_sigaction(signal, info, context);
    } else if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
        previous.sa_handler(signal);
    }
    struct sigaction fallback;
    memset(&fallback, 0, sizeof(fallback));
    fallback.sa_handler = SIG_DFL;
    sigemptyset(&fallback.sa_mask);
    (void)sigaction(signal, &fallback, NULL);
    (void)raise(signal);
    errno = saved;
}

static int catch_crash(int signal, bool only_default) {
    struct sigaction action;
    memset(&action, 0, sizeof(action));
    action.sa_sigaction = on_crash;
    sigemptyset(&action.sa_mask);
    // On the alternate stack where the thread has one (Swift's backtracer sets one up): a stack overflow.
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    if (sigaction(signal, &action, &previous_actions[signal]) != 0) return -1;
    // A signal ignored from the start (SIGQUIT, by a parent) stays ignored; one of the others that has a handler
    // keeps it.
    bool had_default = !(previous_actions[signal].sa_flags & SA_SIGINFO) && previous_actions[signal].sa_handler == SIG_DFL;
    bool ignored = !(previous_actions[signal].sa_flags & SA_SIGINFO) && previous_actions[signal].sa_handler == SIG_IGN;
    if (ignored || (only_default && !had_default)) (void)sigaction(signal, &previous_actions[signal], NULL);
    return 0;
}

static void restore_at_exit(void) { process_end_restore_terminal(); }

int process_end_catch_crashes(void) {
    if (atomic_exchange(&crashes_caught, true)) return 0;
    for (size_t i = 0; i < sizeof(crash_signals) / sizeof(crash_signals[0]); i++) {
        if (catch_crash(crash_signals[i], false) != 0) return -1;
    }
    for (size_t i = 0; i < sizeof(ending_signals) / sizeof(ending_signals[0]); i++) {
        if (catch_crash(ending_signals[i], true) != 0) return -1;
    }
    for (int signal = SIGRTMIN; signal <= SIGRTMAX; signal++) {
        if (catch_crash(signal, true) != 0) return -1;
    }
    // exit(3) called anywhere while the terminal is changed.
    return atexit(restore_at_exit) == 0 ? 0 : -1;
}

_Noreturn void process_end_by_signal(int signal) {
    process_end_restore_terminal();
    struct sigaction action;
    memset(&action, 0, sizeof(action));
    action.sa_handler = SIG_DFL;
    sigemptyset(&action.sa_mask);
    (void)sigaction(signal, &action, NULL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, signal);
    (void)pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    (void)raise(signal);
    _exit(128 + signal);   // a signal whose default action does not end a process
}
