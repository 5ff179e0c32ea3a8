// Intentionally empty: SwiftPM needs one source file to build the target whose header declares libFuzzer's driver.
#include "CFuzzSupport.h"
