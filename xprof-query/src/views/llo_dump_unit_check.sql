-- Per LLO compiler dump with a per-bundle utilization file, bundle and
-- unit: the slots the compiler counted (`llo_dump_bundle_units.used`) next
-- to the ops `llo_dump_ops` gives that unit, and whether they agree.
-- @column hlo_op: the HLO op the dump is of, from its file names.
-- @column address: the bundle's address in the dump.
-- @column unit: the unit, in the vocabulary of `llo_dump_bundle_units.unit` (`VLD`, `VST`, `MXU`,
--   `XLU`, `VALU`, `VPOP`, `EUP`, `SALU`, ...), or `OTHER` for ops no rule knows.
-- @column used: slots of the unit the compiler counted in the bundle (`llo_dump_bundle_units.used`;
--   for `MXU` the MXUs it models busy); NULL where the utilization file has no column for the unit.
-- @column ops: ops of the bundle that `llo_dump_ops` gives the unit, `PSEUDO` ops left out (a
--   count; 0 when none).
-- @column capacity: the unit's slots per bundle, from the utilization file's `CAPACITY` line; NULL
--   where the file has no column for the unit.
-- @column counts_ops: whether `used` counts ops: FALSE for `MXU` (MXUs modelled busy), TRUE
--   otherwise.
-- @column agrees: whether `ops = used` (FALSE where `used` is NULL); NULL for `MXU`.
-- @column trace_id: the kernel's trace: its dump files of one compile.
--
-- The compiler's `…-final_hlo-static-per-bundle-utilization.txt` is the
-- oracle for the unit of an op: `llo_dump_ops.unit` is decided from the
-- op's mnemonic (docs/analyses.md says how), and this view checks it,
-- bundle by bundle. A kernel's dump files of one compile (the same HLO op
-- and file-name time stamp) are one trace; a kernel with both files is
-- checked.
--
-- `used` is NULL where the utilization file has no column for a unit the
-- ops were given (`OTHER`: a mnemonic no rule knows), `ops` 0 where no op
-- of the bundle has the unit. `counts_ops` is FALSE for `MXU`: that
-- column is the MXUs the compiler models busy in the bundle (from the
-- bundle after an MXU's first `vmatmul` to a few after its last), not an
-- op count, so MXU ops (`vmatprep`, `vmatpush`, `vmatmul`) do not add up
-- to it and `agrees` is NULL there. Elsewhere `agrees` is `ops = used`.
-- `PSEUDO` ops take no slot and are left out.
WITH used AS (
  SELECT trace_id, hlo_op, address, unit, used, capacity FROM llo_dump_bundle_units
),
ops AS (
  SELECT trace_id, hlo_op, address, unit, count(*) AS ops
  FROM llo_dump_ops
  WHERE unit <> 'PSEUDO'
  GROUP BY trace_id, hlo_op, address, unit
),
checked AS (
  SELECT DISTINCT u.trace_id FROM used u
  JOIN (SELECT DISTINCT trace_id FROM llo_dump_bundles) b ON b.trace_id = u.trace_id
),
cells AS (
  SELECT u.trace_id, u.hlo_op, u.address, u.unit, u.used, u.capacity
  FROM used u JOIN checked c ON c.trace_id = u.trace_id
  UNION ALL
  SELECT o.trace_id, o.hlo_op, o.address, o.unit, CAST(NULL AS BIGINT), CAST(NULL AS BIGINT)
  FROM ops o JOIN checked c ON c.trace_id = o.trace_id
  WHERE NOT EXISTS (SELECT 1 FROM used u WHERE u.trace_id = o.trace_id AND u.unit = o.unit)
)
SELECT c.hlo_op, c.address, c.unit, c.used, coalesce(o.ops, 0) AS ops, c.capacity,
       c.unit <> 'MXU' AS counts_ops,
       CASE WHEN c.unit <> 'MXU' THEN c.used IS NOT NULL AND c.used = coalesce(o.ops, 0) END
         AS agrees,
       c.trace_id
FROM cells c
LEFT JOIN ops o ON o.trace_id = c.trace_id AND o.address = c.address AND o.unit = c.unit
