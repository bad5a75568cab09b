#ifndef __CAUSAL_SOFTMAX_NVIDIA_H__
#define __CAUSAL_SOFTMAX_NVIDIA_H__

#include "../causal_softmax.h"

DESCRIPTOR(nvidia)

#endif
