;; Byte search with 128-bit SIMD, for the search workers of `grep`: a byte
;; value, and a literal by a pair of its bytes (the rarest two). Assembled by
;; scripts/build_wasm.ts into simd_wasm.ts; see simd.ts for its use.
;;
;; All offsets are into the module's own memory, which the caller reads
;; files into: nothing is copied.
(module
  (memory (export "memory") 4)

  ;; The first index in [start, end) holding `byte`, or -1.
  (func (export "findByte") (param $start i32) (param $end i32) (param $byte i32) (result i32)
    (local $at i32)
    (local $splat v128)
    (local $mask i32)
    (local.set $at (local.get $start))
    (local.set $splat (i8x16.splat (local.get $byte)))
    (block $tail
      (loop $blocks
        (br_if $tail (i32.gt_u (i32.add (local.get $at) (i32.const 16)) (local.get $end)))
        (local.set $mask
          (i8x16.bitmask (i8x16.eq (v128.load align=1 (local.get $at)) (local.get $splat))))
        (if (local.get $mask)
          (then (return (i32.add (local.get $at) (i32.ctz (local.get $mask))))))
        (local.set $at (i32.add (local.get $at) (i32.const 16)))
        (br $blocks)))
    (block $none
      (loop $bytes
        (br_if $none (i32.ge_u (local.get $at) (local.get $end)))
        (if (i32.eq (i32.load8_u (local.get $at)) (local.get $byte))
          (then (return (local.get $at))))
        (local.set $at (i32.add (local.get $at) (i32.const 1)))
        (br $bytes)))
    (i32.const -1))

  ;; Whether the `length` bytes at `at` equal those at `needle`.
  (func $same (param $at i32) (param $needle i32) (param $length i32) (result i32)
    (local $i i32)
    (block $differ
      (loop $bytes
        (if (i32.ge_u (local.get $i) (local.get $length)) (then (return (i32.const 1))))
        (br_if $differ
          (i32.ne
            (i32.load8_u (i32.add (local.get $at) (local.get $i)))
            (i32.load8_u (i32.add (local.get $needle) (local.get $i)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $bytes)))
    (i32.const 0))

  ;; The first index in [start, end) where the `length` bytes at `needle`
  ;; start, or -1. Candidates are the starts where the needle's bytes at
  ;; offsets `first` and `second` both stand, sixteen starts at a time; each
  ;; is then compared whole.
  (func (export "findLiteral")
    (param $start i32) (param $end i32) (param $needle i32) (param $length i32)
    (param $first i32) (param $second i32)
    (result i32)
    (local $at i32)
    (local $last i32)
    (local $one v128)
    (local $two v128)
    (local $mask i32)
    (local $candidate i32)
    (if (i32.gt_u (local.get $length) (i32.sub (local.get $end) (local.get $start)))
      (then (return (i32.const -1))))
    ;; The last start at which the needle fits.
    (local.set $last (i32.sub (local.get $end) (local.get $length)))
    (local.set $one
      (i8x16.splat (i32.load8_u (i32.add (local.get $needle) (local.get $first)))))
    (local.set $two
      (i8x16.splat (i32.load8_u (i32.add (local.get $needle) (local.get $second)))))
    (local.set $at (local.get $start))
    (block $tail
      (loop $blocks
        ;; Sixteen starts from $at, all at most $last.
        (br_if $tail (i32.gt_s (i32.add (local.get $at) (i32.const 15)) (local.get $last)))
        (local.set $mask
          (i8x16.bitmask
            (v128.and
              (i8x16.eq
                (v128.load align=1 (i32.add (local.get $at) (local.get $first)))
                (local.get $one))
              (i8x16.eq
                (v128.load align=1 (i32.add (local.get $at) (local.get $second)))
                (local.get $two)))))
        (block $checked
          (loop $candidates
            (br_if $checked (i32.eqz (local.get $mask)))
            (local.set $candidate (i32.add (local.get $at) (i32.ctz (local.get $mask))))
            (if (call $same (local.get $candidate) (local.get $needle) (local.get $length))
              (then (return (local.get $candidate))))
            ;; Clears the lowest set bit.
            (local.set $mask
              (i32.and (local.get $mask) (i32.sub (local.get $mask) (i32.const 1))))
            (br $candidates)))
        (local.set $at (i32.add (local.get $at) (i32.const 16)))
        (br $blocks)))
    (block $none
      (loop $starts
        (br_if $none (i32.gt_s (local.get $at) (local.get $last)))
        (if (call $same (local.get $at) (local.get $needle) (local.get $length))
          (then (return (local.get $at))))
        (local.set $at (i32.add (local.get $at) (i32.const 1)))
        (br $starts)))
    (i32.const -1))
)
