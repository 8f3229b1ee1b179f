// Checks Kubernetes manifests (deploy/kubernetes's overlays as `kubectl kustomize` renders them):
// every object validates against the Kubernetes API's own schema (kubernetes-models, generated
// from the OpenAPI spec; the ServiceMonitor and PrometheusRule against prometheus-operator's CRD
// schemas), and the permissions are the ones docs/kubernetes.md argues for. With --rules and
// --dashboard, the PrometheusRule's groups and the dashboard ConfigMap's JSON must equal those
// files'. Prints one line per object; exits 1 with every problem listed.
//   node check_manifests.mjs [--rules RULES.yml] [--dashboard DASHBOARD.json] FILE.yaml...
import { readFileSync } from "node:fs";
import { parseAllDocuments } from "yaml";
import { isDeepStrictEqual } from "node:util";
import { ConfigMap, Namespace, Service, ServiceAccount } from "kubernetes-models/v1";
import { NetworkPolicy } from "kubernetes-models/networking.k8s.io/v1";
import { DaemonSet } from "kubernetes-models/apps/v1";
import { ClusterRole, ClusterRoleBinding } from "kubernetes-models/rbac.authorization.k8s.io/v1";
import {
  PrometheusRule,
  ServiceMonitor,
} from "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1";

const models = {
  "v1/Namespace": Namespace,
  "v1/Service": Service,
  "v1/ServiceAccount": ServiceAccount,
  "v1/ConfigMap": ConfigMap,
  "networking.k8s.io/v1/NetworkPolicy": NetworkPolicy,
  "monitoring.coreos.com/v1/PrometheusRule": PrometheusRule,
  "apps/v1/DaemonSet": DaemonSet,
  "rbac.authorization.k8s.io/v1/ClusterRole": ClusterRole,
  "rbac.authorization.k8s.io/v1/ClusterRoleBinding": ClusterRoleBinding,
  "monitoring.coreos.com/v1/ServiceMonitor": ServiceMonitor,
};

const problems = [];
const objects = [];
const args = process.argv.slice(2);
const option = (name) => {
  const at = args.indexOf(name);
  if (at < 0) return null;
  const [, value] = args.splice(at, 2);
  return value;
};
const rulesFile = option("--rules");
const dashboardFile = option("--dashboard");
for (const file of args) {
  for (const doc of parseAllDocuments(readFileSync(file, "utf8"))) {
    if (doc.errors.length > 0) {
      problems.push(`${file}: YAML: ${doc.errors.map((e) => e.message).join("; ")}`);
      continue;
    }
    const object = doc.toJS();
    if (object === null) continue;
    const key = `${object.apiVersion}/${object.kind}`;
    const Model = models[key];
    if (!Model) {
      problems.push(`${file}: ${key}: no schema known to this check`);
      continue;
    }
    try {
      new Model(object).validate();
      console.log(`ok ${key} ${object.metadata?.name}`);
    } catch (e) {
      problems.push(`${file}: ${key} ${object.metadata?.name}: ${e.message}`);
    }
    objects.push(object);
  }
}

// The policy: what the daemon may do, and nothing more.
const find = (kind) => objects.filter((o) => o.kind === kind);
const roles = find("ClusterRole");
for (const role of roles) {
  for (const rule of role.rules ?? []) {
    const verbs = [...(rule.verbs ?? [])].sort().join(",");
    if (JSON.stringify(rule.resources) !== '["pods"]' || verbs !== "get,list,watch" ||
        JSON.stringify(rule.apiGroups) !== '[""]') {
      problems.push(`ClusterRole ${role.metadata.name}: a rule beyond get/list/watch on pods: ` +
                    JSON.stringify(rule));
    }
  }
}
for (const account of find("ServiceAccount")) {
  if (account.automountServiceAccountToken !== false) {
    problems.push(`ServiceAccount ${account.metadata.name}: the token should be mounted only ` +
                  "where a pod asks for it (automountServiceAccountToken: false)");
  }
}
for (const ns of find("Namespace")) {
  if (!ns.metadata.labels?.["pod-security.kubernetes.io/enforce"]) {
    problems.push(`Namespace ${ns.metadata.name}: no pod-security.kubernetes.io/enforce label`);
  }
}
for (const ds of find("DaemonSet")) {
  const pod = ds.spec.template.spec;
  for (const v of pod.volumes ?? []) {
    if (v.hostPath && v.hostPath.path === "/") {
      problems.push(`DaemonSet ${ds.metadata.name}: mounts the node's whole filesystem (${v.name})`);
    }
  }
  for (const c of pod.containers) {
    const add = c.securityContext?.capabilities?.add ?? [];
    if (add.some((cap) => cap !== "SYS_PTRACE")) {
      problems.push(`DaemonSet ${ds.metadata.name}: capabilities beyond SYS_PTRACE: ${add}`);
    }
    if (!c.resources?.requests || !c.resources?.limits) {
      problems.push(`DaemonSet ${ds.metadata.name}: container ${c.name} without requests and limits`);
    }
    for (const m of c.volumeMounts ?? []) {
      const volume = (pod.volumes ?? []).find((v) => v.name === m.name);
      if (volume?.hostPath && m.readOnly !== true && !m.mountPath.startsWith("/var/lib/cgov")) {
        problems.push(`DaemonSet ${ds.metadata.name}: host path ${volume.hostPath.path} mounted writable`);
      }
    }
    if (!(c.args ?? []).includes("--kubernetes")) {
      problems.push(`DaemonSet ${ds.metadata.name}: the daemon does not name pods (--kubernetes)`);
    }
    // --pod-resources reads the kubelet's socket at its documented path (the daemon's default).
    if ((c.args ?? []).includes("--pod-resources")) {
      const mounted = (c.volumeMounts ?? []).some((m) => {
        const volume = (pod.volumes ?? []).find((v) => v.name === m.name);
        return m.mountPath === "/var/lib/kubelet/pod-resources" &&
               volume?.hostPath?.path === "/var/lib/kubelet/pod-resources";
      });
      if (!mounted) {
        problems.push(`DaemonSet ${ds.metadata.name}: --pod-resources without the kubelet's ` +
                      "/var/lib/kubelet/pod-resources mounted at the same path");
      }
    }
  }
  if (pod.securityContext?.seccompProfile?.type !== "RuntimeDefault") {
    problems.push(`DaemonSet ${ds.metadata.name}: no seccompProfile RuntimeDefault`);
  }
  if (pod.automountServiceAccountToken !== true || !pod.serviceAccountName) {
    problems.push(`DaemonSet ${ds.metadata.name}: --kubernetes needs its service account's token`);
  }
}

// The generated objects carry their files unchanged. Whitespace inside strings is not compared:
// kustomize re-emits a multi-line plain scalar (a PromQL expression) with its line breaks
// doubled, which PromQL (and an annotation) reads the same.
const squeezed = (v) =>
  typeof v === "string" ? v.replace(/\s+/g, " ").trim()
  : Array.isArray(v) ? v.map(squeezed)
  : v !== null && typeof v === "object"
    ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, squeezed(x)]))
    : v;
if (rulesFile) {
  const rules = parseAllDocuments(readFileSync(rulesFile, "utf8"))[0].toJS();
  const found = find("PrometheusRule");
  if (found.length !== 1 ||
      !isDeepStrictEqual(squeezed(found[0].spec.groups), squeezed(rules.groups))) {
    problems.push(`PrometheusRule: its groups are not ${rulesFile}'s (run scripts/gen-kube-objects)`);
  }
}
if (dashboardFile) {
  const dashboard = JSON.parse(readFileSync(dashboardFile, "utf8"));
  const maps = find("ConfigMap").filter((m) => m.metadata.labels?.grafana_dashboard === "1");
  const ok = maps.length === 1 && Object.values(maps[0].data ?? {}).length === 1 &&
             isDeepStrictEqual(JSON.parse(Object.values(maps[0].data)[0]), dashboard);
  if (!ok) problems.push(`ConfigMap: the dashboard is not ${dashboardFile}'s (run scripts/gen-kube-objects)`);
}

if (problems.length > 0) {
  for (const p of problems) console.error(p);
  process.exit(1);
}
console.log(`${objects.length} objects valid`);
