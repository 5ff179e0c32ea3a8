#ifndef STORESYNC_SHIMS_H
#define STORESYNC_SHIMS_H

/// Names the calling OS thread (visible in `top -H`, gdb and crash reports); glibc's
/// pthread_setname_np is a GNU extension Swift's Glibc module does not expose.
int storesync_set_thread_name(const char *name);

#endif
