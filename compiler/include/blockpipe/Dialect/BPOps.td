//===- BPOps.td - bp operations ----------------------------*- tablegen -*-===//

#ifndef BLOCKPIPE_DIALECT_BPOPS_TD
#define BLOCKPIPE_DIALECT_BPOPS_TD

include "blockpipe/Dialect/BPTypes.td"
include "mlir/IR/CommonTypeConstraints.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/CallInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Traits
//===----------------------------------------------------------------------===//

class BP_NativeOpTrait<string name> : NativeOpTrait<name> {
  let cppNamespace = "::mlir::bp";
}
// The op must be inside an incore, aic or aiv function.
def BP_KernelOnly : BP_NativeOpTrait<"KernelOnly">;
// The op must be inside an orchestration function.
def BP_OrchestrationOnly : BP_NativeOpTrait<"OrchestrationOnly">;
// The op must be inside an orchestration or a pipeline function.
def BP_HostOnly : BP_NativeOpTrait<"HostOnly">;
// The op runs on the cube unit (AIC).
def BP_CubeOp : BP_NativeOpTrait<"CubeOp">;
// The op runs on a vector unit (AIV).
def BP_VectorOp : BP_NativeOpTrait<"VectorOp">;

// Integer attributes read as signed values, so that negative input reaches
// the verifiers instead of wrapping around.
class BP_SignedIntegerAttr<I type, string cppType>
    : TypedSignlessIntegerAttrBase<type, cppType,
                                   "signed " # cppType # " attribute"> {
  let convertFromStorage = "$_self.getValue().getSExtValue()";
}
def BP_I32Attr : BP_SignedIntegerAttr<I32, "int32_t">;
def BP_I64Attr : BP_SignedIntegerAttr<I64, "int64_t">;

class BP_Op<string mnemonic, list<Trait> traits = []>
    : Op<BP_Dialect, mnemonic, traits>;

//===----------------------------------------------------------------------===//
// Inferred result types, and the op table (vector compute)
//===----------------------------------------------------------------------===//

// The result type of these ops follows from their operands; a builder may
// leave it out (InferTypeOpInterface). Whether a given result type is right
// is the verifier's to say, with its own message, so any result type is
// "compatible" here.
defvar BP_InferResultType = DeclareOpInterfaceMethods<InferTypeOpInterface>;
defvar BP_AnyResultTypeIsCompatible = [{
  static bool isCompatibleReturnTypes(::mlir::TypeRange, ::mlir::TypeRange) {
    return true;
  }
}];

include "blockpipe/Dialect/BPOpTable.td"

//===----------------------------------------------------------------------===//
// The ops, by area
//===----------------------------------------------------------------------===//

include "blockpipe/Dialect/BPOrchestrationOps.td"
include "blockpipe/Dialect/BPKernelOps.td"
include "blockpipe/Dialect/BPVectorOps.td"
include "blockpipe/Dialect/BPCubeOps.td"
include "blockpipe/Dialect/BPPipeOps.td"
include "blockpipe/Dialect/BPP2POps.td"

#endif // BLOCKPIPE_DIALECT_BPOPS_TD
