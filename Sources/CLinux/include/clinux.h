// The GNU extensions of glibc that Swift's Glibc module does not declare, for GPSDLocation's System layer.
#ifndef CLINUX_H
#define CLINUX_H

/// `pipe2`: both ends made with the flags at once (O_CLOEXEC leaves no moment in which a process spawned by
/// another thread could inherit them).
int clinux_pipe2(int fds[2], int flags);

/// `pthread_setname_np` for the calling thread; Linux keeps 15 bytes of the name.
int clinux_name_this_thread(const char *name);

/// The kernel's id of the calling thread (`gettid`).
int clinux_gettid(void);

#endif
