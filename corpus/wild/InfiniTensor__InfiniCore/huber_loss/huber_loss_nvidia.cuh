#ifndef __HUBER_LOSS_NVIDIA_CUH__
#define __HUBER_LOSS_NVIDIA_CUH__

#include "../huber_loss.h"

DESCRIPTOR(nvidia)

#endif // __HUBER_LOSS_NVIDIA_CUH__
