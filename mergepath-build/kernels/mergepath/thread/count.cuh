// Thread layer: counting with a predicated add (inline PTX).
#pragma once

namespace mergepath {

// c += p as one predicated add (the compiler's own code for it is an add and a select).
__device__ __forceinline__ void count_if(int& c, bool p) {
  asm("{\n\t.reg .pred q;\n\tsetp.ne.b32 q, %1, 0;\n\t@q add.s32 %0, %0, 1;\n\t}" : "+r"(c) : "r"((int)p));
}

}  // namespace mergepath
