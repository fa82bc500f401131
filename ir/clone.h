// ir/clone.h — deep copies of IR: a module, or one operation with its regions.
//
// Values are remapped: operands that refer to values defined inside the copied op refer to
// the copies; operands defined outside keep pointing where they did (through `mapping`).
#pragma once

#include <memory>
#include <unordered_map>

namespace tilec {

class Module;
class Operation;
class Value;

using ValueMapping = std::unordered_map<const Value*, Value*>;

std::unique_ptr<Operation> clone_operation(const Operation& op, ValueMapping& mapping);
std::unique_ptr<Module> clone_module(const Module& module);

}  // namespace tilec
