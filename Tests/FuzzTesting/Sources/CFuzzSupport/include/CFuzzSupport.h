#ifndef CFUZZSUPPORT_H
#define CFUZZSUPPORT_H

#include <stddef.h>
#include <stdint.h>

/// libFuzzer's entry point for programs that own `main` (defined in libclang_rt.fuzzer when linked with
/// -sanitize=fuzzer). SwiftPM links executables with `--defsym main=<Module>_main`, so the harness defines
/// `FuzzJWS_main` and hands control to the driver from there.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*UserCb)(const uint8_t *Data, size_t Size));

#endif
