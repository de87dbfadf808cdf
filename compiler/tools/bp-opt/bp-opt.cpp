//===- bp-opt.cpp - The blockpipe optimizer driver --------------*- C++ -*-===//

#include "blockpipe/Dialect/BPDialect.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<mlir::bp::BPDialect, mlir::arith::ArithDialect,
                  mlir::func::FuncDialect, mlir::scf::SCFDialect>();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "blockpipe optimizer driver\n", registry));
}
