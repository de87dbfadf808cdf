//===- OrchestrationBody.cpp - The body of one orchestration --------------===//
//
// See OrchestrationBody.h. Pipe buffers are sized here: per-block bytes
// times the core_num of the launch that consumes them, a literal product
// for a constant core_num and an expression of the live C++ variable for a
// run-time one.
//
//===----------------------------------------------------------------------===//

#include "OrchestrationBody.h"
#include "CppTypes.h"

#include "llvm/ADT/TypeSwitch.h"

#include <limits>

using namespace mlir;
using namespace blockpipe::codegen;

static bool isOutParam(func::FuncOp func, unsigned i) {
  auto dir =
      func.getArgAttrOfType<Attribute>(i, bp::BPDialect::kParamDirAttrName);
  if (!dir)
    return false;
  auto kind = llvm::dyn_cast<bp::ParamDirAttr>(dir);
  return kind && kind.getValue() != bp::ParamDir::In;
}

/// Whether kernel `func` (or a function it calls) reads the elements of its
/// parameter `i`: a bp.load or bp.read of it, before or after storing into
/// it. A launch passes such an Out parameter as read-write: it then waits
/// for the tensor's earlier writer, and the sanitizer (which fills
/// write-only outputs with a pattern) leaves it alone.
static bool readsParam(func::FuncOp func, unsigned i, int depth = 0) {
  if (func.isExternal() || depth > 16)
    return true; // not known: take it as read
  auto module = func->getParentOfType<ModuleOp>();
  SmallVector<Value> work{func.getArgument(i)};
  llvm::DenseSet<Value> seen;
  while (!work.empty()) {
    Value value = work.pop_back_val();
    if (!seen.insert(value).second)
      continue;
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      unsigned index = use.getOperandNumber();
      if (llvm::isa<bp::LoadOp, bp::ReadOp>(user))
        return true;
      if (auto loop = llvm::dyn_cast<scf::ForOp>(user)) {
        if (index < loop.getNumControlOperands())
          continue;
        index -= loop.getNumControlOperands();
        work.push_back(loop.getRegionIterArgs()[index]);
        work.push_back(loop.getResult(index));
        continue;
      }
      if (llvm::isa<scf::YieldOp>(user)) {
        Operation *parent = user->getParentOp();
        if (index < parent->getNumResults())
          work.push_back(parent->getResult(index));
        if (auto loop = llvm::dyn_cast<scf::ForOp>(parent))
          work.push_back(loop.getRegionIterArgs()[index]);
        continue;
      }
      if (auto call = llvm::dyn_cast<func::CallOp>(user)) {
        auto callee = module.lookupSymbol<func::FuncOp>(call.getCallee());
        if (!callee || readsParam(callee, index, depth + 1))
          return true;
      }
      // What carries the tensor on (a store's result, a call's): its GM
      // tensor results, which later loads may read.
      for (Value result : user->getResults())
        if (llvm::isa<bp::GMTensorType>(result.getType()))
          work.push_back(result);
    }
  }
  return false;
}

std::string blockpipe::codegen::pipeBytesName(const KernelInfo &kernel) {
  return "bp_" + kernel.ident + "_pipe_bytes_per_block";
}

/// Parameter indices of `func`'s Out/InOut parameters: result i of a call
/// or launch is the value of the i-th (bp-normalize-return-order).
static std::vector<unsigned> outParams(func::FuncOp func) {
  std::vector<unsigned> out;
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (isOutParam(func, i))
      out.push_back(i);
  return out;
}

std::string OrchestrationBody::dimExpr(Value tensor, unsigned k) const {
  auto type = llvm::cast<bp::GMTensorType>(tensor.getType());
  if (!type.isDynamicDim(k))
    return std::to_string(type.getDimSize(k));
  return expr(tensorRoot(tensor)) + ".shape()[" + std::to_string(k) + "]";
}

std::string OrchestrationBody::signature(llvm::StringRef tensorType,
                                         llvm::StringRef graphType,
                                         bool definition) const {
  // Tensors are always read (their shapes are checked); scalars and the
  // graph may not be.
  bool graphUsed = false;
  func.walk([&](Operation *op) {
    if (!isDead(op) &&
        llvm::isa<bp::LaunchOp, bp::TensorCreateOp, func::CallOp, bp::SendOp,
                  bp::RecvOp, bp::LocalCopyOp, bp::LocalZeroOp, bp::DeviceIdOp,
                  bp::ReadOp>(op))
      graphUsed = true;
  });
  auto unused = [&](bool used) {
    return definition && !used ? std::string("[[maybe_unused]] ")
                               : std::string();
  };
  std::vector<std::string> pieces{unused(graphUsed) + graphType.str() +
                                  " &bp_graph"};
  for (auto [i, type] : llvm::enumerate(func.getArgumentTypes())) {
    if (llvm::isa<bp::GMTensorType>(type))
      pieces.push_back("const " + tensorType.str() + " &" + paramNames[i]);
    else
      pieces.push_back(unused(hasLiveUse(func.getArgument(i))) +
                       *cppScalarType(type) + " " + paramNames[i]);
  }
  return "void " + orch.ident + "(" + llvm::join(pieces, ", ") + ")";
}

LogicalResult OrchestrationBody::emit() {
  findDeadOps(func.getBody());
  for (BlockArgument arg : func.getArguments()) {
    if (!llvm::isa<bp::GMTensorType>(arg.getType()) &&
        !cppScalarType(arg.getType()))
      return error(func, "parameter ")
             << arg.getArgNumber() << " of '" << orch.name
             << "' has unsupported type " << arg.getType()
             << "; orchestration parameters are GM tensors or scalars ("
             << kScalarTypeNames << ")";
    paramNames.push_back(declare(arg, "arg"));
  }
  // The program's sizes are the target's: refuse a device of another spec.
  out.line("rt::checkTarget(bp_graph, \"" +
           escapeCppString(bp::TargetAttr::lookup(func).getName()) + "\");");
  // A mesh program's device ids and transfers assume its mesh size.
  if (auto devices = program.module->getAttrOfType<IntegerAttr>(
          bp::BPDialect::kNumDevicesAttrName))
    out.line("rt::checkMesh(bp_graph, " + std::to_string(devices.getInt()) +
             ");");
  // A tensor of the wrong shape or dtype would make kernels read or write
  // outside it: check what the caller passes.
  for (BlockArgument arg : func.getArguments()) {
    auto type = llvm::dyn_cast<bp::GMTensorType>(arg.getType());
    if (!type)
      continue;
    std::optional<std::string> dtype = dtypeEnumerator(type.getElementType());
    if (!dtype)
      return error(func, "unsupported tensor element type ")
             << type.getElementType();
    std::vector<std::string> dims;
    for (int64_t dim : type.getShape())
      dims.push_back(ShapedType::isDynamic(dim) ? "-1" : std::to_string(dim));
    out.line("rt::checkTensor(" + expr(arg) + ", \"" +
             escapeCppString(expr(arg)) + "\", {" + llvm::join(dims, ", ") +
             "}, rt::DType::" + *dtype + ");");
  }
  if (failed(emitBlock(func.getBody().front())))
    return failure();
  Operation *ret = func.getBody().front().getTerminator();
  for (auto [i, value] : llvm::enumerate(ret->getOperands())) {
    auto root = llvm::dyn_cast<BlockArgument>(tensorRoot(value));
    if (!root || !isOutParam(func, root.getArgNumber()))
      return error(ret, "return value ")
             << i << " of '" << orch.name
             << "' is not one of its Out/InOut parameters; an orchestration "
                "may only return those (mark the tensors it writes with "
                "bp.dir and run bp-normalize-return-order)";
  }
  return success();
}

void OrchestrationBody::checkCoreNum(bp::LaunchOp launch) {
  Value coreNum = launch.getDynamicCoreNum();
  if (!coreNum || !checkedCoreNums.insert(launch).second ||
      !bp::isCheckedAtRunTime(
          launch, launch.getDynamicCoreNumMutable()[0].getOperandNumber()))
    return;
  std::string what =
      "core_num of the launch of '" + launch.getCallee().str() + "'";
  if (std::optional<std::string> line = userLine(launch.getLoc()))
    what += " at " + *line;
  out.line("if (" + expr(coreNum) + " <= 0)");
  out.line("  throw rt::Error(\"" + escapeCppString(what) +
           " is \" + std::to_string(" + expr(coreNum) +
           ") + \"; it must be positive\");");
}

void OrchestrationBody::checkArgumentShapes(bp::LaunchOp launch,
                                            func::FuncOp callee) {
  for (auto [i, operand] : llvm::enumerate(launch.getArgs())) {
    auto given = llvm::dyn_cast<bp::GMTensorType>(operand.getType());
    auto wanted =
        llvm::dyn_cast<bp::GMTensorType>(callee.getArgumentTypes()[i]);
    if (!given || !wanted || given.getRank() != wanted.getRank())
      continue;
    bool checked = false;
    std::vector<std::string> dims;
    for (unsigned k = 0; k < wanted.getRank(); ++k) {
      checked |= !wanted.isDynamicDim(k) && given.isDynamicDim(k);
      dims.push_back(
          wanted.isDynamicDim(k) ? "-1" : std::to_string(wanted.getDimSize(k)));
    }
    if (!checked)
      continue;
    std::optional<std::string> param = program.nameOf(callee.getArgument(i));
    std::string what = "argument '" + expr(operand) + "' of the launch of '" +
                       launch.getCallee().str() + "'";
    if (std::optional<std::string> line = userLine(launch.getLoc()))
      what += " at " + *line;
    what += param ? " (parameter '" + *param + "')"
                  : " (parameter " + std::to_string(i) + ")";
    out.line("rt::checkLaunchArgument(" + expr(operand) + ", \"" +
             escapeCppString(what) + "\", {" + llvm::join(dims, ", ") + "});");
  }
}

LogicalResult OrchestrationBody::emitPipeBuffer(bp::TensorCreateOp create,
                                                bp::LaunchOp launch) {
  auto type = llvm::cast<bp::GMTensorType>(create.getType());
  int64_t perBlock = type.getDimSize(0);
  std::string hint = "gm_pipe_buffer_" + std::to_string(pipeBuffers++);
  std::string name = scope.unique(hint);
  names[create.getResult()] = name;
  std::string blocks;
  if (std::optional<int64_t> coreNum = launch.getStaticCoreNum())
    blocks = std::to_string(*coreNum);
  else
    blocks = expr(launch.getDynamicCoreNum());
  checkCoreNum(launch);
  out.line(
      "// Pipe buffer of the launch of '" +
      escapeCppComment(launch.getCallee()) + "': a slice for each of its " +
      (launch.getStaticCoreNum() ? blocks : "`" + blocks + "`") + " blocks.");
  // A literal product that does not fit an int is computed in int64_t (in
  // int it would wrap and size the buffer too small).
  // The kernel's named per-block size when it is the one launched (it
  // always is after bp-inject-gm-pipe-buffer); an int64_t constant, so a
  // product beyond an int does not wrap.
  func::FuncOp callee = program.lookup(launch.getCallee());
  const KernelInfo *kernel = callee ? program.kernelFor(callee) : nullptr;
  std::string perBlockExpr = std::to_string(perBlock);
  if (kernel && kernel->pipeBufferArg && kernel->pipeBufferBytes == perBlock)
    perBlockExpr = pipeBytesName(*kernel);
  else if (std::optional<int64_t> coreNum = launch.getStaticCoreNum())
    if (perBlock * *coreNum > std::numeric_limits<int32_t>::max())
      perBlockExpr = "int64_t{" + perBlockExpr + "}";
  out.line("rt::Tensor " + name + " = bp_graph.createPipeBuffer(\"" +
           escapeCppString(name) + "\", " + perBlockExpr + " * " + blocks +
           ");");
  return success();
}

LogicalResult OrchestrationBody::aliasResults(Operation *op,
                                              func::FuncOp callee) {
  std::vector<unsigned> outs = outParams(callee);
  // Launch operands may be preceded by core_num; the call's args are the
  // trailing operands.
  unsigned first = op->getNumOperands() - callee.getNumArguments();
  static constexpr llvm::StringLiteral kFix =
      "; result i must be the i-th Out/InOut parameter (mark the tensors it "
      "writes with bp.dir and run bp-normalize-return-order)";
  if (outs.size() != op->getNumResults())
    return error(op, "'") << callee.getSymName() << "' has "
                          << op->getNumResults() << " results but "
                          << outs.size() << " Out/InOut parameters" << kFix;
  for (auto [i, result] : llvm::enumerate(op->getResults())) {
    Value param = op->getOperand(first + outs[i]);
    if (result.getType() != param.getType())
      return error(op, "result ")
             << i << " of '" << callee.getSymName() << "' has type "
             << result.getType() << " but must be its Out/InOut parameter "
             << outs[i] << " of type " << param.getType() << kFix;
    aliasTensor(result, param);
  }
  return success();
}

LogicalResult OrchestrationBody::emitTransfer(Operation *op,
                                              llvm::StringRef call,
                                              Value tensor,
                                              DenseIntElementsAttr pairs,
                                              bp::ChannelHandleAttr channel,
                                              bool isHostTransfer) {
  if (isHostTransfer)
    return error(op, "'")
           << op->getName()
           << "' with is_host_transfer = true moves data between a device "
              "and the host, which the runtime does not do; device-to-device "
              "transfers leave it false";
  out.line("rt::" + call.str() + "(bp_graph, " + expr(tensor) + ", " +
           std::to_string(channel.getHandle()) + ", " + pairsList(pairs) +
           ", " + where(op) + ");");
  return success();
}

std::string OrchestrationBody::pairsList(DenseIntElementsAttr pairs) {
  SmallVector<int64_t> ids(pairs.getValues<int64_t>());
  std::vector<std::string> items;
  for (size_t i = 0; i + 1 < ids.size(); i += 2)
    items.push_back("{" + std::to_string(ids[i]) + ", " +
                    std::to_string(ids[i + 1]) + "}");
  return "{" + llvm::join(items, ", ") + "}";
}

std::string OrchestrationBody::devicesList(ArrayRef<int64_t> devices) {
  std::vector<std::string> items;
  for (int64_t device : devices)
    items.push_back(std::to_string(device));
  return "{" + llvm::join(items, ", ") + "}";
}

std::string OrchestrationBody::where(Operation *op) const {
  std::string place =
      userLine(op->getLoc()).value_or("orchestration '" + orch.name + "'");
  return "\"" + escapeCppString(place) + "\"";
}

LogicalResult OrchestrationBody::emitLaunch(bp::LaunchOp op) {
  func::FuncOp callee = program.lookup(op.getCallee());
  const KernelInfo *kernel = callee ? program.kernelFor(callee) : nullptr;
  if (!kernel)
    return error(op, "launched '") << op.getCallee() << "' is not a kernel";
  if (callee.getNumArguments() != op.getArgs().size())
    return error(op, "launch of '")
           << op.getCallee() << "' passes " << op.getArgs().size()
           << " arguments for " << callee.getNumArguments() << " parameters";
  launched.insert(kernel);
  if (auto it = deferred.find(op); it != deferred.end())
    if (failed(emitPipeBuffer(it->second, op)))
      return failure();

  std::vector<std::string> args;
  for (auto [i, operand] : llvm::enumerate(op.getArgs())) {
    Type type = callee.getArgumentTypes()[i];
    if (auto tensor = llvm::dyn_cast<bp::GMTensorType>(type)) {
      if (kernel->pipeBufferArg == i) {
        args.push_back("rt::Arg::pipeBuffer(" + expr(operand) + ", " +
                       pipeBytesName(*kernel) + ")");
        continue;
      }
      const char *access =
          isOutParam(callee, i)
              ? (llvm::cast<bp::ParamDirAttr>(
                     callee.getArgAttr(i, bp::BPDialect::kParamDirAttrName))
                                 .getValue() == bp::ParamDir::Out &&
                         !readsParam(callee, unsigned(i))
                     ? "out"
                     : "inout")
              : "in";
      args.push_back(std::string("rt::Arg::") + access + "(" + expr(operand) +
                     ")");
      // The kernel ABI passes every dynamic dim after its tensor.
      for (unsigned k = 0; k < tensor.getRank(); ++k)
        if (tensor.isDynamicDim(k))
          args.push_back("rt::Arg::scalar<int64_t>(" + dimExpr(operand, k) +
                         ")");
      continue;
    }
    args.push_back("rt::Arg::scalar<" + *cppScalarType(type) + ">(" +
                   expr(operand) + ")");
  }
  checkArgumentShapes(op, callee);
  std::string blocks = op.getStaticCoreNum()
                           ? std::to_string(*op.getStaticCoreNum())
                           : expr(op.getDynamicCoreNum());
  checkCoreNum(op);
  std::string spec = "rt::launchSpec(/*block_num=*/" + blocks;
  if (kernel->aivSubblocks() != 1)
    spec += std::string(", /*sync_start=*/") +
            (op.getSyncStart() ? "true" : "false") + ", /*aiv_subblocks=*/" +
            std::to_string(kernel->aivSubblocks());
  else if (op.getSyncStart())
    spec += ", /*sync_start=*/true";
  spec += ")";
  out.line("bp_graph.submit(bp_launchable_" + kernel->ident + "(), " + spec +
           ",");
  // Generated lines stay within 100 columns: one argument a line when they
  // do not fit on one (the body is indented by 2).
  const std::string indent(16, ' ');
  std::string oneLine = indent + "{" + llvm::join(args, ", ") + "});";
  if (oneLine.size() + 2 <= 100) {
    out.line(oneLine);
  } else {
    for (size_t k = 0; k < args.size(); ++k)
      out.line(indent + (k == 0 ? "{" : " ") + args[k] +
               (k + 1 == args.size() ? "});" : ","));
  }
  return aliasResults(op, callee);
}

LogicalResult OrchestrationBody::emitSideOp(Operation *op) {
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](bp::DimOp op) {
        alias(op, dimExpr(op.getSource(), op.getIndex()));
        return success();
      })
      .Case([&](bp::ReadOp op) -> LogicalResult {
        std::optional<std::string> type = cppScalarType(op.getType());
        if (!type)
          return error(op, "unsupported scalar type ") << op.getType();
        std::vector<std::string> index;
        for (Value i : op.getIndices())
          index.push_back(expr(i));
        std::string where = userLine(op->getLoc()).value_or("?");
        out.line("const " + *type + " " + declare(op, "value") +
                 " = rt::read<" + *type + ">(bp_graph, " +
                 expr(op.getSource()) + ", {" + llvm::join(index, ", ") +
                 "}, \"" + escapeCppString(where) + "\");");
        return success();
      })
      .Case([&](bp::TensorCreateOp op) -> LogicalResult {
        auto type = llvm::cast<bp::GMTensorType>(op.getType());
        if (op.getPipeBuffer()) {
          auto launch = op->hasOneUse()
                            ? llvm::dyn_cast<bp::LaunchOp>(*op->user_begin())
                            : bp::LaunchOp();
          if (!launch)
            return error(op, "a pipe buffer must be passed to exactly one "
                             "launch: its size depends on that launch's "
                             "core_num");
          func::FuncOp callee = program.lookup(launch.getCallee());
          const KernelInfo *kernel =
              callee ? program.kernelFor(callee) : nullptr;
          unsigned operandIndex =
              op->use_begin()->getOperandNumber() -
              (launch.getNumOperands() - launch.getArgs().size());
          if (!kernel || kernel->pipeBufferArg != operandIndex)
            return error(op, "the pipe buffer must be passed as the "
                             "__gm_pipe_buffer parameter of '")
                   << launch.getCallee() << "'";
          if (type.getRank() != 1 ||
              type.getDimSize(0) != kernel->pipeBufferBytes)
            return error(op, "pipe buffer of ")
                   << type << " but '" << launch.getCallee() << "' needs "
                   << kernel->pipeBufferBytes << " bytes per block";
          // Sized by the launch's core_num: emitted here when that value is
          // already defined, else right before the launch.
          Value coreNum = launch.getDynamicCoreNum();
          if (coreNum && !dominance.properlyDominates(coreNum, op)) {
            deferred[launch] = op;
            return success();
          }
          return emitPipeBuffer(op, launch);
        }
        std::optional<std::string> dtype =
            dtypeEnumerator(type.getElementType());
        if (!dtype)
          return error(op, "unsupported tensor element type ")
                 << type.getElementType();
        std::vector<std::string> dims;
        unsigned dynamic = 0;
        for (int64_t dim : type.getShape())
          dims.push_back(ShapedType::isDynamic(dim)
                             ? expr(op.getDynamicSizes()[dynamic++])
                             : std::to_string(dim));
        std::string name = declare(op, "tensor");
        out.line("rt::Tensor " + name + " = bp_graph.createTensor(\"" +
                 escapeCppString(name) + "\", {" + llvm::join(dims, ", ") +
                 "}, rt::DType::" + *dtype +
                 (op.getManualDep() ? ", /*manualDep=*/true" : "") + ");");
        return success();
      })
      .Case([&](bp::TensorViewOp op) -> LogicalResult {
        auto type = llvm::cast<bp::GMTensorType>(op.getType());
        std::vector<std::string> offsets, sizes;
        for (Value offset : op.getOffsets())
          offsets.push_back(expr(offset));
        unsigned dynamic = 0;
        for (int64_t dim : type.getShape())
          sizes.push_back(ShapedType::isDynamic(dim)
                              ? expr(op.getSizes()[dynamic++])
                              : std::to_string(dim));
        std::string name = declare(op, "view");
        std::string what =
            "view '" + name + "' of '" + expr(op.getSource()) + "'";
        if (std::optional<std::string> line = userLine(op.getLoc()))
          what += " at " + *line;
        out.line("const rt::Tensor " + name + " = rt::tensorView(" +
                 expr(op.getSource()) + ", {" + llvm::join(offsets, ", ") +
                 "}, {" + llvm::join(sizes, ", ") + "}, \"" +
                 escapeCppString(what) + "\");");
        return success();
      })
      .Case([&](bp::LaunchOp op) { return emitLaunch(op); })
      .Case([&](func::CallOp call) -> LogicalResult {
        func::FuncOp callee = program.lookup(call.getCallee());
        const OrchestrationInfo *other =
            callee ? program.orchestrationFor(callee) : nullptr;
        if (!other) {
          std::optional<bp::FunctionKind> kind =
              callee ? bp::getFunctionKind(callee) : std::nullopt;
          return error(call, "an orchestration may only call orchestrations, "
                             "but '")
                 << call.getCallee() << "' is of kind '"
                 << (kind ? bp::stringifyFunctionKind(*kind) : "none")
                 << "'; launch kernels and groups with bp.launch";
        }
        called.insert(other);
        std::vector<std::string> args{"bp_graph"};
        for (Value operand : call.getOperands())
          args.push_back(expr(operand));
        out.line("::" + program.project + "::" + other->ident + "(" +
                 llvm::join(args, ", ") + ");");
        return aliasResults(call, callee);
      })
      .Case([&](bp::DeviceIdOp op) {
        alias(op, "rt::deviceId(bp_graph)");
        return success();
      })
      .Case([&](bp::SendOp op) {
        return emitTransfer(op, "send", op.getOperand(),
                            op.getSourceTargetPairs(), op.getChannelHandle(),
                            op.getIsHostTransfer());
      })
      .Case([&](bp::RecvOp op) -> LogicalResult {
        if (failed(emitTransfer(op, "recv", op.getDest(),
                                op.getSourceTargetPairs(),
                                op.getChannelHandle(), op.getIsHostTransfer())))
          return failure();
        aliasTensor(op.getResult(), op.getDest());
        return success();
      })
      .Case([&](bp::LocalCopyOp op) {
        out.line("rt::localCopy(bp_graph, " + expr(op.getSource()) + ", " +
                 expr(op.getDest()) + ", " + devicesList(op.getDevices()) +
                 ", " + where(op) + ");");
        aliasTensor(op.getResult(), op.getDest());
        return success();
      })
      .Case([&](bp::LocalZeroOp op) {
        out.line("rt::localZero(bp_graph, " + expr(op.getDest()) + ", " +
                 devicesList(op.getDevices()) + ", " + where(op) + ");");
        aliasTensor(op.getResult(), op.getDest());
        return success();
      })
      .Case([&](bp::CollectivePermuteOp op) {
        return error(op, "'bp.collective_permute' reaches codegen as is; run "
                         "bp-decompose-collective-permute first (it is part "
                         "of the default pipeline)");
      })
      .Default([&](Operation *op) {
        return error(op, "'")
               << op->getName()
               << "' is not supported in an orchestration; orchestrations "
                  "are made of bp.tensor_create, bp.launch, calls of "
                  "orchestrations, scalar arith, scf.for, scf.if and scf.while";
      });
}
