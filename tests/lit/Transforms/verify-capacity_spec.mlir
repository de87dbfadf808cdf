// The target comes from bp-register-target: a spec that cannot be read, or
// is invalid, is an error naming the file (and the field).
// RUN: not bp-opt --bp-register-target=spec=%S/Inputs/does-not-exist.json --bp-verify-capacity %s 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not bp-opt --bp-register-target=spec=%S/Inputs/bad-spec.json --bp-verify-capacity %s 2>&1 | FileCheck %s --check-prefix=BAD
// MISSING: error: bp-register-target: {{.*}}does-not-exist.json
// BAD: error: bp-register-target: {{.*}}bad-spec.json{{.*}}local_memory_bytes
func.func @f() attributes {bp.kind = #bp<kind aiv>} {
  return
}
