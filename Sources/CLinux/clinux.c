#define _GNU_SOURCE
#include "clinux.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <pthread.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int clinux_pipe2(int fds[2], int flags) { return pipe2(fds, flags); }

int clinux_name_this_thread(const char *name) {
    char truncated[16];
    strncpy(truncated, name, sizeof(truncated) - 1);
    truncated[sizeof(truncated) - 1] = '\0';
    return pthread_setname_np(pthread_self(), truncated);
}

int clinux_gettid(void) { return (int)syscall(SYS_gettid); }

static volatile int clinux_signal_fd = -1;

static void clinux_signal_handler(int number) {
    int saved = errno;
    unsigned char byte = (unsigned char)number;
    (void)write(clinux_signal_fd, &byte, 1);
    errno = saved;
}

int clinux_forward_signals(const int *signals, int count, int fd) {
    clinux_signal_fd = fd;
    struct sigaction action;
    memset(&action, 0, sizeof(action));
    action.sa_handler = clinux_signal_handler;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    for (int i = 0; i < count; i++) {
        if (sigaction(signals[i], &action, NULL) != 0) return -1;
    }
    return 0;
}
