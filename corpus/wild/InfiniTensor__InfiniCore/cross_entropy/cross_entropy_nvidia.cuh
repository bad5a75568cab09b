#ifndef __CROSS_ENTROPY_NVIDIA_H__
#define __CROSS_ENTROPY_NVIDIA_H__

#include "../cross_entropy.h"

DESCRIPTOR(nvidia)

#endif
