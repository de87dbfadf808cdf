//===- bp-translate.cpp - bp IR to a C++ project ----------------*- C++ -*-===//
//
//   bp-translate --bp-to-cpp -o DIR [input.mlir]
//   bp-translate --bp-to-cpp -o - [input.mlir]
//
// Reads a module (after the default pipeline, or runs it with
// --bp-default-pipeline; one without bp-plan-kernels' decisions gets them
// first), writes the project of docs/architecture.md ("From a
// program to a run") under DIR, and with --bp-dump-passes the IR after each
// pass to DIR/passes/. With `-o -` the files go to stdout instead, each after
// a line `// ---- FILE: <path>`. Errors are printed at the user's location;
// nothing is written then.
//
//===----------------------------------------------------------------------===//

#include "blockpipe/Codegen/Codegen.h"
#include "blockpipe/Dialect/BPDialect.h"
#include "blockpipe/Dialect/KernelPlan.h"
#include "blockpipe/Transforms/Passes.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/AsmParser/AsmParserState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

namespace cl = llvm::cl;

static cl::opt<bool> toCpp("bp-to-cpp",
                           cl::desc("Translate to a C++ project (the only "
                                    "translation; accepted for clarity)"));
static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<input .mlir>"),
                                      cl::init("-"));
static cl::opt<std::string> outputDir("o",
                                      cl::desc("Output directory ('-': print "
                                               "every file to stdout)"),
                                      cl::value_desc("dir"), cl::Required);
static cl::opt<bool>
    runPipeline("bp-default-pipeline",
                cl::desc("Run the default pass pipeline before translating"));
static cl::opt<bool> dumpPasses(
    "bp-dump-passes",
    cl::desc("With --bp-default-pipeline: write the IR after each pass to "
             "<dir>/passes/NN_<pass>.mlir"));
static cl::opt<std::string>
    target("bp-target",
           cl::desc("With --bp-default-pipeline: the bundled device spec to "
                    "compile for (default: the module's, else cpu-sim)"));
static cl::opt<std::string>
    targetSpec("bp-target-spec",
               cl::desc("With --bp-default-pipeline: a device spec file to "
                        "compile for"));
static cl::opt<std::string>
    projectName("bp-project",
                cl::desc("CMake project / library / C++ namespace name "
                         "(default: the module's name, else bp_program)"));

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(argc, argv, "blockpipe C++ code generator\n");

  mlir::DialectRegistry registry;
  registry.insert<mlir::bp::BPDialect, mlir::arith::ArithDialect,
                  mlir::func::FuncDialect, mlir::scf::SCFDialect>();
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // Errors point at the user's line; a dump of the op would only bury it.
  context.printOpOnDiagnostic(false);

  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input =
      mlir::openInputFile(inputFile, &error);
  if (!input) {
    llvm::errs() << "bp-translate: " << error << "\n";
    return 1;
  }
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  mlir::SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  // The parser state keeps the SSA names of the text (%x, %row), which the
  // generated C++ reuses.
  mlir::AsmParserState parserState;
  mlir::ParserConfig config(&context);
  mlir::Block parsed;
  if (mlir::failed(
          mlir::parseAsmSourceFile(sourceMgr, &parsed, config, &parserState)))
    return 1;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::detail::constructContainerOpForParserIfNecessary<mlir::ModuleOp>(
          &parsed, &context, mlir::UnknownLoc::get(&context));
  if (!module)
    return 1;
  blockpipe::codegen::attachSourceNames(parserState);

  bool toStdout = outputDir == "-";
  if (toStdout && dumpPasses) {
    llvm::errs() << "bp-translate: --bp-dump-passes writes files; it needs an "
                    "output directory, not '-o -'\n";
    return 1;
  }

  if (runPipeline) {
    mlir::PassManager pm(&context);
    mlir::bp::DefaultPipelineOptions options;
    options.target = target;
    options.specPath = targetSpec;
    if (dumpPasses) {
      llvm::SmallString<256> dir(outputDir);
      llvm::sys::path::append(dir, "passes");
      options.dumpDir = dir.str().str();
    }
    mlir::bp::buildDefaultPipeline(pm, options);
    if (mlir::failed(pm.run(*module)))
      return 1;
  }
  // Codegen reads bp-plan-kernels' decisions; IR written by hand (lit
  // tests) or by another pipeline gets them here.
  if (!mlir::bp::isPlanned(*module)) {
    mlir::PassManager pm(&context);
    pm.addPass(mlir::bp::createBPPlanKernels());
    if (mlir::failed(pm.run(*module)))
      return 1;
  }

  blockpipe::codegen::EmitOptions options;
  options.projectName = projectName;
  mlir::FailureOr<blockpipe::codegen::FileMap> files =
      blockpipe::codegen::emitCpp(*module, options);
  if (mlir::failed(files))
    return 1;
  if (toStdout) {
    blockpipe::codegen::printFiles(*files, llvm::outs());
    return 0;
  }
  if (mlir::failed(blockpipe::codegen::writeFiles(*files, outputDir, error))) {
    llvm::errs() << "bp-translate: " << error << "\n";
    return 1;
  }
  return 0;
}
