#ifndef __LOGCUMSUMEXP_NVIDIA_CUH__
#define __LOGCUMSUMEXP_NVIDIA_CUH__

#include "../logcumsumexp.h"

DESCRIPTOR(nvidia)

#endif // __LOGCUMSUMEXP_NVIDIA_CUH__
