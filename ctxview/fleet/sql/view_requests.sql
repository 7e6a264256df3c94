-- requests: one row per request, from every day's folder, filtered by the report's options
-- (set them with SET VARIABLE; NULL: no filter)
CREATE OR REPLACE TEMP VIEW requests AS
SELECT *
FROM read_parquet(getvariable('dataset') || '/requests/**/*.parquet', hive_partitioning = true)
WHERE (getvariable('since') IS NULL OR date >= CAST(getvariable('since') AS DATE))
  AND (getvariable('model') IS NULL OR contains(model, getvariable('model')))
  AND (getvariable('project') IS NULL OR contains(project, getvariable('project')));
