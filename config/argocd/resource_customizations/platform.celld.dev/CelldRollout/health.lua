-- Argo CD health check of a celld-operator CelldRollout (platform.celld.dev/v1alpha1), from the
-- conditions the operator writes (they follow kstatus): Stalled (halted, rolled back or aborted:
-- nothing moves until a new revision comes), Reconciling (a wave is under way, or waits) and
-- Ready (every wave passed). A rollout that waits for a person (paused, or its next wave waits
-- for `kubectl celld rollout promote`) is Suspended, as Argo CD reports its own paused Rollouts,
-- rather than Progressing until someone looks.
local hs = { status = "Progressing", message = "Waiting for celld-operator to report the rollout" }
if obj.status == nil or obj.status.conditions == nil then
  return hs
end
-- A status written for an older spec says nothing about this one (a resume or a new image).
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
-- Before the pause: a failed rollout that someone also paused is still failed.
if c.Stalled ~= nil and c.Stalled.status == "True" then
  return { status = "Degraded", message = said(c.Stalled) }
end
local phase = obj.status.phase
if phase == "Paused" or phase == "WaitingForPromotion" then
  if c.Reconciling ~= nil then
    return { status = "Suspended", message = said(c.Reconciling) }
  end
  return { status = "Suspended", message = phase }
end
if c.Reconciling ~= nil and c.Reconciling.status == "True" then
  return { status = "Progressing", message = said(c.Reconciling) }
end
if c.Ready ~= nil and c.Ready.status == "True" then
  return { status = "Healthy", message = c.Ready.message }
end
if c.Ready ~= nil then
  return { status = "Progressing", message = said(c.Ready) }
end
return hs
