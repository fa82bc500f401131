// ir/printer.h — the IR text form (`.tir`).
//
//   // tilec IR
//   module {source = "samples/vector_add.tile", passes = ["parse"]}
//
//   kernel @name(%A: tensor<N, f32>, ...) {attrs} loc(3:1) {
//     %r0, %r1 = opname %a, %b {attr = value, flag} : type0, type1 loc(4:3) {
//       ^(%arg: type, ...):
//       ...nested ops...
//     } {
//       ...second region...
//     }
//     return
//   }
//
// Values print as their name hint made unique within the kernel (`%acc`, `%acc_1`) or as a
// number (`%7`). ir/parser.cpp reads exactly this form: print → parse → print is identical.
#pragma once

#include <string>

namespace tilec {

class Module;
class Operation;

std::string print_module(const Module& module);
std::string print_kernel(const Operation& kernel);

}  // namespace tilec
