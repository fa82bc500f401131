// tools/emulate_driver.cpp — writes the driver main() of a file's kernels (protocol in the header).
//
//   1. The fixed part: #include of the .cu, then helpers that read and write data files and
//      find NAME=VALUE arguments (in a namespace of their own, so no .cu name collides); per
//      kernel a function: each tensor read from DATA_DIR/argI.in, each dimension and scalar
//      from its NAME=VALUE argument, the launcher called with them in launch_parameters order,
//      each written tensor saved to DATA_DIR/argI.out, finish().
//   2. main(): configure(), then the function of the KERNEL argument.
#include "tools/emulate_driver.h"

#include <fmt/core.h>

#include <map>
#include <variant>

#include "backend/cuda/cuda_syntax.h"

namespace tilec::tools {

namespace {

constexpr const char* kDriverHelpers = R"(
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace tilec_emulate_driver {

// DATA_DIR/argI.in in device memory between guard pages (tilec_emu::allocate_global), its size
// in `bytes`; `name` names it when an access falls outside.
inline void* read_tensor(const char* directory, int position, const char* name, size_t& bytes) {
  char path[4096];
  std::snprintf(path, sizeof path, "%s/arg%d.in", directory, position);
  std::FILE* file = std::fopen(path, "rb");
  if (!file) {
    std::fprintf(stderr, "emulated program: cannot open %s\n", path);
    std::exit(tilec_emu::exit_usage);
  }
  std::fseek(file, 0, SEEK_END);
  long size = std::ftell(file);
  std::fseek(file, 0, SEEK_SET);
  bytes = size > 0 ? static_cast<size_t>(size) : 0;
  void* data = tilec_emu::allocate_global(bytes, name);
  if (!data || std::fread(data, 1, bytes, file) != bytes) {
    std::fprintf(stderr, "emulated program: cannot read %s\n", path);
    std::exit(tilec_emu::exit_usage);
  }
  std::fclose(file);
  return data;
}

inline bool write_tensor(const char* directory, int position, const void* data, size_t bytes) {
  char path[4096];
  std::snprintf(path, sizeof path, "%s/arg%d.out", directory, position);
  std::FILE* file = std::fopen(path, "wb");
  bool ok = file && std::fwrite(data, 1, bytes, file) == bytes;
  if (file) ok = std::fclose(file) == 0 && ok;
  if (!ok) std::fprintf(stderr, "emulated program: cannot write %s\n", path);
  return ok;
}

// The VALUE of the NAME=VALUE argument.
inline const char* value_of(int argc, char** argv, const char* name) {
  size_t length = std::strlen(name);
  for (int i = 4; i < argc; ++i)  // past PROGRAM CU_PATH DATA_DIR KERNEL
    if (std::strncmp(argv[i], name, length) == 0 && argv[i][length] == '=') return argv[i] + length + 1;
  std::fprintf(stderr, "emulated program: missing the argument %s=VALUE\n", name);
  std::exit(tilec_emu::exit_usage);
}
inline long long integer(int argc, char** argv, const char* name) {
  return std::strtoll(value_of(argc, argv, name), nullptr, 10);
}
inline double real(int argc, char** argv, const char* name) { return std::strtod(value_of(argc, argv, name), nullptr); }

}  // namespace tilec_emulate_driver
)";

// `const __nv_bfloat16*` → `__nv_bfloat16`.
std::string pointee(std::string type) {
  if (type.rfind("const ", 0) == 0) type.erase(0, 6);
  if (!type.empty() && type.back() == '*') type.pop_back();
  return type;
}

}  // namespace

std::string driver_input_file(size_t position) { return fmt::format("arg{}.in", position); }
std::string driver_output_file(size_t position) { return fmt::format("arg{}.out", position); }

namespace {

// The function that runs one kernel: `static int tilec_emulate_run_NAME(int argc, char** argv)`,
// after configure() took its options (argv: PROGRAM CU_PATH DATA_DIR KERNEL NAME=VALUE...).
std::string run_function(const cuda::KernelPlan& plan) {
  std::vector<cuda::LaunchParameter> parameters = cuda::launch_parameters(plan);
  cuda::NameTable names = plan.names;
  std::string data = names.unique("data_directory");
  std::string status = names.unique("launch_status");
  std::string exit_status = names.unique("exit_status");
  std::string saved = names.unique("saved");
  // Each tensor's byte count, named after it past every parameter's name (a tensor X_bytes beside
  // X clashed with X's count).
  std::map<int, std::string> byte_counts;
  for (const cuda::LaunchParameter& parameter : parameters)
    if (parameter.param >= 0 && plan.params[static_cast<size_t>(parameter.param)].value->type().is_tensor())
      byte_counts[parameter.param] = names.unique(parameter.name + "_bytes");
  std::string out =
      fmt::format("\n// Kernel {0}: launch_{0} on the tensors in DATA_DIR and the values of NAME=VALUE.\n", plan.name);
  out += fmt::format("static int tilec_emulate_run_{}(int argc, char** argv) {{\n", plan.name);
  out += fmt::format("  const char* const {} = argv[2];\n", data);
  std::vector<std::string> arguments;
  for (const cuda::LaunchParameter& parameter : parameters) {
    arguments.push_back(parameter.name);
    if (parameter.param < 0) {
      out += fmt::format("  const int64_t {0} = tilec_emulate_driver::integer(argc, argv, \"{0}\");\n",
                         parameter.name);
      continue;
    }
    const Type& type = plan.params[static_cast<size_t>(parameter.param)].value->type();
    if (type.is_tensor()) {
      std::string element = pointee(parameter.type);
      const std::string& bytes = byte_counts.at(parameter.param);
      out += fmt::format("  size_t {0} = 0;  // {1}\n", bytes, type.to_string());
      out += fmt::format(
          "  {0}* const {1} = static_cast<{0}*>(tilec_emulate_driver::read_tensor({2}, {3}, \"tensor {4}\", {5}));\n",
          element, parameter.name, data, parameter.param, plan.params[static_cast<size_t>(parameter.param)].value->name_hint(),
          bytes);
      continue;
    }
    ScalarKind kind = type.element();
    std::string value;
    if (is_float(kind))
      value = fmt::format("{}(static_cast<float>(tilec_emulate_driver::real(argc, argv, \"{}\")))", parameter.type,
                          parameter.name);
    else if (kind == ScalarKind::i1)
      value = fmt::format("tilec_emulate_driver::integer(argc, argv, \"{}\") != 0", parameter.name);
    else
      value = fmt::format("static_cast<{}>(tilec_emulate_driver::integer(argc, argv, \"{}\"))", parameter.type,
                          parameter.name);
    out += fmt::format("  const {} {} = {};\n", parameter.type, parameter.name, value);
  }
  std::string list;
  for (const std::string& argument : arguments) list += argument + ", ";
  out += fmt::format("  const cudaError_t {} = launch_{}({}nullptr);\n", status, plan.name, list);
  out += fmt::format("  bool {} = true;\n", saved);
  out += fmt::format("  if ({} == cudaSuccess) {{\n", status);
  for (const cuda::LaunchParameter& parameter : parameters) {
    if (parameter.param < 0 || parameter.type.rfind("const ", 0) == 0 || parameter.type.back() != '*') continue;
    out += fmt::format("    {0} = tilec_emulate_driver::write_tensor({1}, {2}, {3}, {4}) && {0};\n", saved, data,
                       parameter.param, parameter.name, byte_counts.at(parameter.param));
  }
  out += "  }\n";
  out += fmt::format("  const int {} = tilec_emu::finish({});\n", exit_status, status);
  out += fmt::format("  return {0} == tilec_emu::exit_ok && !{1} ? tilec_emu::exit_usage : {0};\n", exit_status, saved);
  out += "}\n";
  return out;
}

}  // namespace

std::string driver_source(const std::vector<const cuda::KernelPlan*>& plans, const std::string& cu_include) {
  // Phase 1.
  std::string kernels;
  for (const cuda::KernelPlan* plan : plans) kernels += (kernels.empty() ? "" : " ") + plan->name;
  std::string out = fmt::format(
      "// Generated by tilec emulate: runs a launcher of the .cu below on the CPU (docs/emulation.md);\n"
      "// kernels: {0}.\n"
      "// Usage: PROGRAM CU_PATH DATA_DIR KERNEL [NAME=VALUE]... [--policy eager|lazy|random] [--seed S]\n"
      "//        [--sms N] [--workers N] [--no-hazards] [--bounds end|start]\n"
      "//   DATA_DIR/argI.in   the bytes of tensor parameter I (row-major, as on the device)\n"
      "//   DATA_DIR/argI.out  written for each tensor the kernel stores to\n"
      "//   KERNEL             which kernel's launcher to call\n"
      "//   NAME=VALUE         each dimension and scalar: integers in decimal, floats as hex floats\n"
      "#include \"{1}\"\n",
      kernels, cu_include);
  out += kDriverHelpers;
  for (const cuda::KernelPlan* plan : plans) out += run_function(*plan);

  // Phase 2.
  out += "\nint main(int argc, char** argv) {\n";
  out += "  if (!tilec_emu::configure(argc, argv, argc > 1 ? argv[1] : \"\")) return tilec_emu::exit_usage;\n";
  out += "  const char* const tilec_emulate_kernel = argc > 3 ? argv[3] : \"\";\n";
  for (const cuda::KernelPlan* plan : plans)
    out += fmt::format("  if (std::strcmp(tilec_emulate_kernel, \"{0}\") == 0) return tilec_emulate_run_{0}(argc, argv);\n",
                       plan->name);
  out += fmt::format("  std::fprintf(stderr, \"usage: %s CU_PATH DATA_DIR KERNEL [NAME=VALUE]... [emulator options]; \"\n"
                     "               \"KERNEL is one of: {}\\n\", argv[0]);\n",
                     kernels);
  out += "  return tilec_emu::exit_usage;\n";
  out += "}\n";
  return out;
}

std::vector<std::string> driver_value_arguments(const cuda::KernelPlan& plan, const runtime::KernelBuffers& buffers) {
  std::vector<std::string> arguments;
  for (const cuda::LaunchParameter& parameter : cuda::launch_parameters(plan)) {
    if (parameter.param < 0) {
      const runtime::HostBuffer& tensor = buffers.tensors.at(static_cast<size_t>(parameter.dim_tensor));
      arguments.push_back(fmt::format("{}={}", parameter.name, tensor.dims().at(static_cast<size_t>(parameter.dim_axis))));
      continue;
    }
    size_t position = static_cast<size_t>(parameter.param);
    if (buffers.is_tensor.at(position)) continue;
    const runtime::KernelArgument& value = buffers.scalars.at(position);
    if (const double* real = std::get_if<double>(&value))
      arguments.push_back(fmt::format("{}={:a}", parameter.name, *real));
    else if (const int64_t* integer = std::get_if<int64_t>(&value))
      arguments.push_back(fmt::format("{}={}", parameter.name, *integer));
  }
  return arguments;
}

}  // namespace tilec::tools
