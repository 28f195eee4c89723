--[[
  job_submit.lua for slurm-burst (Slurm's job_submit/lua plugin).

  The SPANK plugin spank_cloud_contract.so decides, at submit time, which
  burst node sets can serve a job's --cloud-contract, and records that
  decision in the job-control environment. This script copies it into the
  job: the node-set features (ANDed with any --constraint the user gave)
  and the partition(s). It holds no contract logic of its own.

  Install: JobSubmitPlugins=lua in slurm.conf, and this file as
  job_submit.lua beside slurm.conf (or chain it from your own script:
  require it and call burst_job_submit(job_desc, part_list, submit_uid) and
  burst_job_modify(job_desc, job_rec, part_list, modify_uid)).
]]

local function spank_env(job_desc)
	local env = {}
	local t = job_desc.spank_job_env
	if t == nil then
		return env
	end
	-- a 0-indexed table of "NAME=value" strings: use pairs()
	for _, kv in pairs(t) do
		local k, v = string.match(kv, "^([^=]+)=(.*)$")
		if k ~= nil then
			env[k] = v
		end
	end
	return env
end

-- A note's text as the job's notes carry it (lib/core/wire.h): '%', ';'
-- and control characters written %XX, so that nothing in it (a contract
-- comes from the client's job-control environment) can end the note or
-- make another.
local function note_text(s)
	return (string.gsub(s, "[%%;%c]", function(c)
		return string.format("%%%02X", string.byte(c))
	end))
end

local function listed(list, word)
	for w in string.gmatch(list, "[^,]+") do
		if w == word then
			return true
		end
	end
	return false
end

function burst_job_submit(job_desc, part_list, submit_uid)
	local env = spank_env(job_desc)
	local features = env["CLOUD_FEATURES"]
	-- The job-control environment is the client's to set (a plugin of its
	-- own, the REST API): trust none of it unless it is one whole decision.
	-- The node sets the job prolog checks must be exactly those the job's
	-- features route it to; otherwise a job could claim node sets it is not
	-- routed to, be refused in the prolog, and have healthy nodes failed.
	if features == nil or features == "" then
		for k, _ in pairs(env) do
			if string.sub(k, 1, 6) == "CLOUD_" then
				slurm.log_user("cloud_contract: the job carries %s but no --cloud-contract decision; CLOUD_* values are set by the cloud_contract plugin only: submit with sbatch --cloud-contract, or without them", k)
				return slurm.ERROR
			end
		end
		return slurm.SUCCESS       -- not a contract job
	end
	local nodesets = env["CLOUD_NODESETS"] or ""
	if (string.gsub(nodesets, ",", "|")) ~= features then
		slurm.log_user("cloud_contract: the job's contract decision is inconsistent (CLOUD_NODESETS=%s, CLOUD_FEATURES=%s): it was not made by the cloud_contract plugin; submit with sbatch --cloud-contract",
			nodesets, features)
		return slurm.ERROR
	end
	local partitions = env["CLOUD_PARTITIONS"] or ""
	local contract = env["CLOUD_CONTRACT_NAME"]
	if contract == nil or contract == "" then
		contract = env["CLOUD_CONTRACT"] or "?"
	end

	-- features: the node sets, ANDed with the user's own constraint
	local user = job_desc.features
	if user ~= nil and user ~= "" then
		if string.find(user, "[|%[]") and string.find(features, "|", 1, true) then
			slurm.log_user("cloud_contract: --constraint=%s has alternatives and cannot be combined with --cloud-contract=%s, which itself allows several node sets (%s); drop --constraint or use a contract that names one node set",
				user, contract, features)
			return slurm.ERROR
		end
		local parts = {}
		for ns in string.gmatch(features, "[^|]+") do
			table.insert(parts, user .. "&" .. ns)
		end
		job_desc.features = table.concat(parts, "|")
	else
		job_desc.features = features
	end

	-- partition: the decision's, unless the user chose one of them
	local p = job_desc.partition
	if p ~= nil and p ~= "" then
		for want in string.gmatch(p, "[^,]+") do
			if not listed(partitions, want) then
				slurm.log_user("cloud_contract: partition %s has no burst node set for contract %s; it can run in: %s",
					want, contract, partitions)
				return slurm.ERROR
			end
		end
	else
		job_desc.partition = partitions
	end
	-- The contract, where the burst agent reads it (by job id) to rank the
	-- instance types of the job's nodes: the admin comment, which only
	-- administrators and this script can set. Not job_desc.extra (which the
	-- Slurm 23.02+ resume file carries): that is the user's own --extra, its
	-- owner may change it at any time, and with
	-- SchedulerParameters=extra_constraints it filters nodes. Left alone.
	job_desc.admin_comment = "burst: contract=" .. note_text(contract)
	return slurm.SUCCESS
end

function slurm_job_submit(job_desc, part_list, submit_uid)
	return burst_job_submit(job_desc, part_list, submit_uid)
end

-- The features of a contract job are its decision's node sets, which the job
-- prolog checks against CLOUD_NODESETS: changed later (scontrol update
-- Features=), the job would be routed to node sets it does not claim and be
-- refused on healthy nodes there. Cancel and submit again instead.
function burst_job_modify(job_desc, job_rec, part_list, modify_uid)
	local f = job_desc.features
	if f == nil then
		return slurm.SUCCESS
	end
	local env = spank_env(job_rec)
	local features = env["CLOUD_FEATURES"]
	if features ~= nil and features ~= "" and f ~= job_rec.features then
		local msg = string.format("cloud_contract: job %s was routed by its --cloud-contract (node sets %s); its features cannot change: cancel it and submit again with the contract you want",
			tostring(job_rec.job_id), env["CLOUD_NODESETS"] or "?")
		-- scontrol of Slurm 22.05 shows only "Unspecified error": the reason goes to slurmctld's log too
		slurm.log_user("%s", msg)
		slurm.log_info("%s", msg)
		return slurm.ERROR
	end
	return slurm.SUCCESS
end

function slurm_job_modify(job_desc, job_rec, part_list, modify_uid)
	return burst_job_modify(job_desc, job_rec, part_list, modify_uid)
end

slurm.log_info("slurm-burst job_submit.lua loaded")
return slurm.SUCCESS
