// RUN: bp-opt --bp-pipeline-stages %s | FileCheck %s
// RUN: bp-opt --bp-pipeline-stages --bp-verify-p2p %s > /dev/null

// A pipeline of three stages on devices 0, 1, 1: the boundary 0 -> 1 gets a
// send after stage 0 and a recv into a new buffer before stage 1, both with
// source_target_pairs [[0, 1]]; the boundary 1 -> 1 stays on its device.
// Boundaries use channel base + s, base above the module's channel 4.

!act = !bp.tensor<8x16xf32>
!batch = !bp.tensor<32x16xf32>
module attributes {bp.num_devices = 2 : i64} {
  func.func @s0(%x: !act, %h: !act {bp.dir = #bp<dir out>}) -> !act
      attributes {bp.kind = #bp<kind orchestration>, bp.device = 0 : i64} {
    return %h : !act
  }
  func.func @s1(%x: !act, %w: !act, %h: !act {bp.dir = #bp<dir out>}) -> !act
      attributes {bp.kind = #bp<kind orchestration>, bp.device = 1 : i64} {
    bp.send %x {channel_handle = #bp.channel<handle = 4, type = 1>, source_target_pairs = dense<[[1, 0]]> : tensor<1x2xi64>} : !act
    return %h : !act
  }
  func.func @s2(%x: !act, %h: !act {bp.dir = #bp<dir out>}) -> !act
      attributes {bp.kind = #bp<kind orchestration>, bp.device = 1 : i64} {
    return %h : !act
  }
  func.func @s3(%x: !act, %h: !act {bp.dir = #bp<dir out>}) -> !act
      attributes {bp.kind = #bp<kind orchestration>, bp.device = 0 : i64} {
    %r = bp.recv %h {channel_handle = #bp.channel<handle = 4, type = 1>, source_target_pairs = dense<[[1, 0]]> : tensor<1x2xi64>} : !act
    return %r : !act
  }

  // CHECK-LABEL: func.func @forward
  // CHECK-SAME: bp.stage_channel = 5 : i64
  func.func @forward(%x: !batch, %w: !act, %y: !batch {bp.dir = #bp<dir out>}) -> !batch
      attributes {bp.kind = #bp<kind pipeline>, bp.microbatches = 4 : i64} {
    // CHECK: %[[H0:.*]] = bp.stage @s0(%{{.*}}, %[[B0:.*]]) : (!bp.tensor<32x16xf32>, !bp.tensor<8x16xf32>)
    // CHECK-NEXT: bp.send %[[H0]] {channel_handle = #bp.channel<handle = 5, type = 1>, source_target_pairs = dense<{{\[\[}}0, 1]]> : tensor<1x2xi64>}
    // CHECK-NEXT: %[[B1:.*]] = bp.tensor_create : !bp.tensor<8x16xf32>
    // CHECK-NEXT: %[[BUF:.*]] = bp.tensor_create : !bp.tensor<8x16xf32>
    // CHECK-NEXT: %[[IN:.*]] = bp.recv %[[BUF]] {channel_handle = #bp.channel<handle = 5, type = 1>, source_target_pairs = dense<{{\[\[}}0, 1]]> : tensor<1x2xi64>}
    // CHECK-NEXT: %[[H1:.*]] = bp.stage @s1(%[[IN]], %{{.*}}, %[[B1]])
    // CHECK-NOT: bp.send
    // CHECK-NOT: bp.recv
    // CHECK: %[[H2:.*]] = bp.stage @s2(%[[H1]], %{{.*}})
    // CHECK-NEXT: return %[[H2]]
    %b0 = bp.tensor_create : !act
    %h0 = bp.stage @s0(%x, %b0) : (!batch, !act) -> !act
    %b1 = bp.tensor_create : !act
    %h1 = bp.stage @s1(%h0, %w, %b1) : (!act, !act, !act) -> !act
    %h2 = bp.stage @s2(%h1, %y) : (!act, !batch) -> !batch
    return %h2 : !batch
  }
}
