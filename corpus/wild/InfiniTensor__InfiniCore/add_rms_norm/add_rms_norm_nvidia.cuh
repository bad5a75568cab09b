#ifndef __ADD_RMS_NORM_NVIDIA_CUDA_H__
#define __ADD_RMS_NORM_NVIDIA_CUDA_H__

#include "../add_rms_norm.h"

DESCRIPTOR(nvidia)

#endif
