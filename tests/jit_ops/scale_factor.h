/* scale_factor.h - JIT test fixture: the factor of jit_scale (scale.c). */
#define SCALE_FACTOR 2.0f
