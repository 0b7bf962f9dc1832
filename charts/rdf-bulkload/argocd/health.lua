-- Argo CD health check for rdf.bulkload.io/BulkLoad. Install it as the argocd-cm key
-- resource.customizations.health.rdf.bulkload.io_BulkLoad (docs/operator.md, "GitOps").
-- It reads the conditions the operator writes: Ready is True while the database the spec
-- asks for is served, also while a newer dump set is built (Building); Stalled means that
-- someone must fix something (a failed build, refused credentials), while what was served
-- goes on being served. Argo CD runs custom health checks without Lua's string library:
-- this script uses only the base language.
local health = {status = "Progressing", message = "waiting for the operator to report on the BulkLoad"}
if obj.status == nil or obj.status.conditions == nil then
  return health
end
if obj.status.observedGeneration == nil or obj.status.observedGeneration < obj.metadata.generation then
  health.message = "waiting for the operator to observe generation " .. obj.metadata.generation
  return health
end
local conditions = {}
for _, c in ipairs(obj.status.conditions) do
  conditions[c.type] = c
end
local ready, stalled, reconciling = conditions["Ready"], conditions["Stalled"], conditions["Reconciling"]
if stalled ~= nil and stalled.status == "True" then
  health.status = "Degraded"
  health.message = stalled.reason .. ": " .. stalled.message
  if ready ~= nil and ready.status == "True" then
    health.message = health.message .. " (still serving: " .. ready.message .. ")"
  end
  return health
end
if ready ~= nil and ready.status == "True" then
  health.status = "Healthy"
  health.message = ready.message
  return health
end
if reconciling ~= nil and reconciling.status == "True" then
  health.message = reconciling.reason .. ": " .. reconciling.message
end
return health
