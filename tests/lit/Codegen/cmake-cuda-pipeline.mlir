// RUN: rm -rf %t && bp-translate --bp-to-cpp --bp-default-pipeline --bp-target=cuda %S/../Transforms/pipeline-stages.mlir -o %t
// RUN: FileCheck %s --input-file=%t/CMakeLists.txt

// A cuda pipeline's kernels are built in its stages' projects: the top-level
// CMakeLists.txt has no .cu sources to mark as C++ for cuda-emu, and says
// nothing about them (it once failed to emit at all).

// CHECK: if(BLOCKPIPE_CUDA_EMU)
// CHECK-NOT: set_source_files_properties
// CHECK: target_link_libraries({{.*}} PUBLIC blockpipe::runtime PRIVATE blockpipe::cuda_emu)
