//===- bp-opt.cpp - The blockpipe optimizer driver --------------*- C++ -*-===//

#include "blockpipe/Compiler/Compiler.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  blockpipe::registerDialects(registry);
  blockpipe::registerPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "blockpipe optimizer driver\n", registry));
}
