// RUN: bp-translate --bp-to-cpp -o - %s | FileCheck %s

// bp.tensor_view becomes rt::tensorView, which checks the window when the
// orchestration runs and names the view and its line; a launch argument
// sized at run time where the kernel was compiled for a size is checked
// before the launch (rt::checkLaunchArgument), naming the argument, the
// launch and the parameter.

module {
  func.func @scale(%x: !bp.tensor<16x64xf32>,
                   %y: !bp.tensor<16x64xf32> {bp.dir = #bp<dir out>})
      -> !bp.tensor<16x64xf32> attributes {bp.kind = #bp<kind aiv>} {
    %c0 = arith.constant 0 : index
    %t = bp.load %x[%c0, %c0] : !bp.tensor<16x64xf32> -> !bp.tile<16x64xf32, vec>
    %o = bp.store %t, %y[%c0, %c0] : !bp.tile<16x64xf32, vec>, !bp.tensor<16x64xf32>
    return %o : !bp.tensor<16x64xf32>
  }

  // CHECK-LABEL: // ---- FILE: orchestration/main.cpp
  // CHECK: const rt::Tensor xv = rt::tensorView(x, {row, 0}, {16, 64},
  // CHECK-NEXT: "view 'xv' of 'x' at orchestration-views.mlir:[[@LINE+14]]");
  // CHECK-NEXT: const rt::Tensor yv = rt::tensorView(y, {row, 0}, {rows, 64},
  // CHECK-NEXT: "view 'yv' of 'y' at orchestration-views.mlir:[[@LINE+13]]");
  // CHECK-NEXT: rt::checkLaunchArgument(yv,
  // CHECK-NEXT: "argument 'yv' of the launch of 'scale' at orchestration-views.mlir:[[@LINE+12]] (parameter 'y')",
  // CHECK-NEXT: {16, 64});
  // CHECK-NEXT: bp_graph.submit(bp_launchable_scale(), rt::launchSpec(/*block_num=*/1),
  // CHECK-NEXT: {rt::Arg::in(xv), rt::Arg::out(yv)});
  func.func @main(%x: !bp.tensor<64x64xf32>,
                  %y: !bp.tensor<64x64xf32> {bp.dir = #bp<dir out>},
                  %row: index, %rows: index)
      -> !bp.tensor<64x64xf32> attributes {bp.kind = #bp<kind orchestration>} {
    %c0 = arith.constant 0 : index
    // The sizes of the result's dynamic dims follow `sizes`.
    %xv = bp.tensor_view %x[%row, %c0] : !bp.tensor<64x64xf32> -> !bp.tensor<16x64xf32>
    %yv = bp.tensor_view %y[%row, %c0] sizes [%rows] : !bp.tensor<64x64xf32> -> !bp.tensor<?x64xf32>
    %r = bp.launch @scale(%xv, %yv) core_num(1) : (!bp.tensor<16x64xf32>, !bp.tensor<?x64xf32>) -> !bp.tensor<?x64xf32>
    return %y : !bp.tensor<64x64xf32>
  }
}
