// The --help text of `chamvi approvals` and `chamvi approve` (no heavy imports: --help loads nothing).
import { ENV } from './settings.js';

export const APPROVAL_SECRET_VAR = 'CHAMVI_APPROVAL_SECRET';

export const APPROVALS_HELP = `Usage: chamvi approvals <workflow id> [options]

Lists the tool calls of an agent run waiting for a person's decision (query chamvi.pendingApprovals):
call id, tool, input, reason, and when silence decides (deny by default).

Options:
  --json                  print the pending calls as JSON
  --address <host:port>   Temporal frontend (default localhost:7233)  [${ENV.address}]
  --namespace <ns>        Temporal namespace (default default)        [${ENV.namespace}]
  --profile <name>        Temporal connection profile (@temporalio/envconfig: TLS, API key;
                          file TEMPORAL_CONFIG_FILE or ~/.config/temporalio/temporal.toml) [TEMPORAL_PROFILE]
  --data-converter <mod>  module exporting the workers' dataConverter (payload codecs)   [CHAMVI_DATA_CONVERTER]
  -h, --help              show this help

Exits 1 when nothing is waiting.`;

export const APPROVE_HELP = `Usage: chamvi approve <workflow id> <call id> [--deny] [--reason <text>] [options]

Approves (or, with --deny, denies) a pending tool call of an agent run. Mints an approval token
bound to the run, the call, its effect key, its input (fingerprint) and the decision with the
workers' approval secret (${APPROVAL_SECRET_VAR}), and sends it with update chamvi.decideApproval;
the run verifies it, and so does the activity that runs the call.
A denied call never runs; the model is told the reason.

Options:
  --deny                  deny the call (default: approve)
  --reason <text>         why (a denial's reason is told to the model)
  --approver <name>       who decides, for the run's record (default: $USER)
  --timeout <seconds>     how long to wait for the run's verdict (default 90); past it, says what did not answer
  --address <host:port>   Temporal frontend (default localhost:7233)  [${ENV.address}]
  --namespace <ns>        Temporal namespace (default default)        [${ENV.namespace}]
  --profile <name>        Temporal connection profile (@temporalio/envconfig: TLS, API key;
                          file TEMPORAL_CONFIG_FILE or ~/.config/temporalio/temporal.toml) [TEMPORAL_PROFILE]
  --data-converter <mod>  module exporting the workers' dataConverter (payload codecs)   [CHAMVI_DATA_CONVERTER]
  -h, --help              show this help

Environment: ${APPROVAL_SECRET_VAR} (required, the same secret the workers hold).
Exits 1 when the run refuses the decision (not waiting, already decided, invalid token), or when
no verdict comes within --timeout (no worker of the run answering, or its verification not answering).`;
