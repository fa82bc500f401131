// <cuda_runtime.h> under `tilec emulate` (-DTILEC_EMULATE, this folder first on the include path): the CPU emulation of CUDA.
#include "tilec_emulate.h"
