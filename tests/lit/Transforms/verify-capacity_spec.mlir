// A spec that cannot be read, or is invalid, is an error naming the file.
// RUN: not bp-opt --bp-verify-capacity=spec=%S/Inputs/does-not-exist.json %s 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not bp-opt --bp-verify-capacity=spec=%S/Inputs/bad-spec.json %s 2>&1 | FileCheck %s --check-prefix=BAD
// MISSING: error: bp-verify-capacity: {{.*}}does-not-exist.json
// BAD: error: bp-verify-capacity: {{.*}}bad-spec.json{{.*}}local_memory_bytes
func.func @f() attributes {bp.kind = #bp<kind aiv>} {
  return
}
