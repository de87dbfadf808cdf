// RUN: bp-opt --bp-pipeline-stages --split-input-file --verify-diagnostics %s

// What makes a pipeline function something other than a chain of stages.

!act = !bp.tensor<8x16xf32>
!batch = !bp.tensor<32x16xf32>
module attributes {bp.num_devices = 2 : i64} {
  func.func @s0(%x: !act, %h: !act {bp.dir = #bp<dir out>}) -> !act
      attributes {bp.kind = #bp<kind orchestration>, bp.device = 0 : i64} {
    return %h : !act
  }
  func.func @s1(%x: !act, %h: !act {bp.dir = #bp<dir out>}) -> !act
      attributes {bp.kind = #bp<kind orchestration>, bp.device = 1 : i64} {
    return %h : !act
  }
  func.func @forward(%x: !batch, %y: !batch {bp.dir = #bp<dir out>}) -> !batch
      attributes {bp.kind = #bp<kind pipeline>, bp.microbatches = 4 : i64} {
    %b0 = bp.tensor_create : !act
    %h0 = bp.stage @s0(%x, %b0) : (!batch, !act) -> !act
    // expected-error @+1 {{does not read the output of 's0'; each stage reads its predecessor's activation once}}
    %h1 = bp.stage @s1(%x, %y) : (!batch, !batch) -> !batch
    return %h1 : !batch
  }
}

// -----

!act = !bp.tensor<8x16xf32>
!batch = !bp.tensor<32x16xf32>
module attributes {bp.num_devices = 2 : i64} {
  func.func @s0(%x: !act, %h: !act {bp.dir = #bp<dir out>}) -> !act
      attributes {bp.kind = #bp<kind orchestration>, bp.device = 0 : i64} {
    return %h : !act
  }
  func.func @s1(%x: !act, %h: !act {bp.dir = #bp<dir out>}) -> !act
      attributes {bp.kind = #bp<kind orchestration>, bp.device = 1 : i64} {
    return %h : !act
  }
  func.func @forward(%x: !batch, %y: !act {bp.dir = #bp<dir out>}) -> !act
      attributes {bp.kind = #bp<kind pipeline>, bp.microbatches = 4 : i64} {
    %b0 = bp.tensor_create : !act
    %h0 = bp.stage @s0(%x, %b0) : (!batch, !act) -> !act
    // expected-error @+1 {{writes the pipeline's output whole on every microbatch; give it 4 times the rows of the stage's output}}
    %h1 = bp.stage @s1(%h0, %y) : (!act, !act) -> !act
    return %h1 : !act
  }
}

// -----

!act = !bp.tensor<8x16xf32>
!batch = !bp.tensor<32x16xf32>
module attributes {bp.num_devices = 3 : i64} {
  func.func @s0(%x: !act, %h: !act {bp.dir = #bp<dir out>}) -> !act
      attributes {bp.kind = #bp<kind orchestration>, bp.device = 0 : i64} {
    return %h : !act
  }
  func.func @s1(%x: !act, %h: !act {bp.dir = #bp<dir out>}) -> !act
      attributes {bp.kind = #bp<kind orchestration>, bp.device = 1 : i64} {
    return %h : !act
  }
  // expected-error @+1 {{pipeline 'forward' leaves device 2 of the mesh of 3 devices without a stage (its stages are on devices 0, 1)}}
  func.func @forward(%x: !batch, %y: !batch {bp.dir = #bp<dir out>}) -> !batch
      attributes {bp.kind = #bp<kind pipeline>, bp.microbatches = 4 : i64} {
    %b0 = bp.tensor_create : !act
    %h0 = bp.stage @s0(%x, %b0) : (!batch, !act) -> !act
    %h1 = bp.stage @s1(%h0, %y) : (!act, !batch) -> !batch
    return %h1 : !batch
  }
}

// -----

!act = !bp.tensor<8x16xf32>
!batch = !bp.tensor<32x16xf32>
module attributes {bp.num_devices = 2 : i64} {
  func.func @s0(%x: !act, %h: !act {bp.dir = #bp<dir out>}) -> !act
      attributes {bp.kind = #bp<kind orchestration>, bp.device = 0 : i64} {
    return %h : !act
  }
  func.func @s1(%x: !act, %h: !act {bp.dir = #bp<dir out>}) -> !act
      attributes {bp.kind = #bp<kind orchestration>, bp.device = 1 : i64} {
    return %h : !act
  }
  // expected-error @+1 {{pipeline 'forward' asks for the interleaved schedule, which interleaves the stages a device holds, but every device holds one stage (devices 0, 1)}}
  func.func @forward(%x: !batch, %y: !batch {bp.dir = #bp<dir out>}) -> !batch
      attributes {bp.kind = #bp<kind pipeline>, bp.microbatches = 4 : i64, bp.schedule = "interleaved"} {
    %b0 = bp.tensor_create : !act
    %h0 = bp.stage @s0(%x, %b0) : (!batch, !act) -> !act
    %h1 = bp.stage @s1(%h0, %y) : (!act, !batch) -> !batch
    return %h1 : !batch
  }
}

// -----

!act = !bp.tensor<8x16xf32>
!batch = !bp.tensor<32x16xf32>
module attributes {bp.num_devices = 1 : i64} {
  func.func @s0(%x: !act, %h: !act {bp.dir = #bp<dir out>}) -> !act
      attributes {bp.kind = #bp<kind orchestration>, bp.device = 0 : i64} {
    return %h : !act
  }
  func.func @forward(%x: !batch, %y: !batch {bp.dir = #bp<dir out>}) -> !batch
      attributes {bp.kind = #bp<kind pipeline>, bp.microbatches = 4 : i64} {
    %b0 = bp.tensor_create : !act
    %h0 = bp.stage @s0(%x, %b0) : (!batch, !act) -> !act
    // expected-error @+1 {{runs 's0' a second time; each stage of a pipeline is its own orchestration}}
    %h1 = bp.stage @s0(%h0, %y) : (!act, !batch) -> !batch
    return %h1 : !batch
  }
}
