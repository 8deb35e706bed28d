-- Argo CD health check of a celld-operator CelldFleet (platform.celld.dev/v1alpha1), from the
-- conditions the operator writes: Stalled (it cannot reach its spec until someone acts),
-- Reconciling (it is on its way), Ready, SourceSynced (for a fleet with spec.source: Suspended
-- while publishing from the source is suspended, Degraded while the bucket serves a version
-- the source did not publish and driftPolicy is Report) and Deployed (a fleet without
-- spec.source held at 0 nodes until a Worker is deployed waits for an outside event:
-- Suspended, where kstatus reads it as Stalled).
local hs = { status = "Progressing", message = "Waiting for celld-operator to report the fleet" }
if obj.status == nil or obj.status.conditions == nil then
  return hs
end
if obj.metadata.generation ~= nil and (obj.status.observedGeneration == nil
    or obj.status.observedGeneration < obj.metadata.generation) then
  hs.message = "Waiting for celld-operator to observe generation " .. obj.metadata.generation
  return hs
end
local c = {}
for _, condition in ipairs(obj.status.conditions) do
  c[condition.type] = condition
end
local function said(condition)
  return condition.reason .. ": " .. condition.message
end
if c.SourceSynced ~= nil and c.SourceSynced.reason == "Suspended" then
  return { status = "Suspended", message = said(c.SourceSynced) }
end
if c.SourceSynced == nil and c.Deployed ~= nil and c.Deployed.reason == "NoDeployment" then
  return { status = "Suspended", message = said(c.Deployed) }
end
if c.Stalled ~= nil and c.Stalled.status == "True" then
  return { status = "Degraded", message = said(c.Stalled) }
end
if c.Reconciling ~= nil and c.Reconciling.status == "True" then
  return { status = "Progressing", message = said(c.Reconciling) }
end
if c.SourceSynced ~= nil and c.SourceSynced.reason == "Drifted" then
  return { status = "Degraded", message = said(c.SourceSynced) }
end
if c.Ready ~= nil and c.Ready.status == "True" then
  return { status = "Healthy", message = c.Ready.message }
end
if c.Ready ~= nil then
  return { status = "Progressing", message = said(c.Ready) }
end
return hs
