#define _GNU_SOURCE
#include "clinux.h"

#include <fcntl.h>
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
