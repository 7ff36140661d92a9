/**
 * `deft batch --emit k8s`: the cloud equivalent of a Slurm job array, a Kubernetes Indexed Job.
 * Pod K runs `deft batch TASKS --out DIR --index K` (K from `JOB_COMPLETION_INDEX`); the task
 * file, the output directory and Deft itself must sit on a volume every pod mounts.
 */
import { dirname } from "node:path";
import { stringify } from "yaml";
import { UsageError } from "../errors.ts";
import { shellQuote } from "./slurm.ts";

/** Inputs of the manifest. */
export interface K8sRequest {
  tasksFile: string;
  out: string;
  total: number;
  concurrency: number;
  deft: readonly string[];
  batchArgs: readonly string[];
}

/** The Indexed Job as YAML. */
export function indexedJob(request: K8sRequest): string {
  const command = [
    ...request.deft,
    "batch",
    request.tasksFile,
    "--out",
    request.out,
    ...request.batchArgs,
  ].map(shellQuote).join(" ");
  const volume = sharedRoot(request);
  if (volume === "/") {
    throw new UsageError(
      "--emit k8s: the task file, the output directory and Deft have no common folder below /; " +
        "put them under one folder (the volume every pod mounts), e.g. /shared.",
    );
  }
  const job = {
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: { name: "deft-batch" },
    spec: {
      completionMode: "Indexed",
      completions: request.total,
      parallelism: request.concurrency,
      backoffLimitPerIndex: 1,
      template: {
        spec: {
          restartPolicy: "Never",
          containers: [{
            name: "deft",
            image: "denoland/deno:debian-2.9.6",
            command: ["bash", "-c", `exec ${command} --index "$JOB_COMPLETION_INDEX"`],
            envFrom: [{ secretRef: { name: "deft-api-keys" } }],
            volumeMounts: [{ name: "shared", mountPath: volume }],
          }],
          volumes: [{ name: "shared", persistentVolumeClaim: { claimName: "deft-shared" } }],
        },
      },
    },
  };
  return "# Written by deft batch --emit k8s. The volume must hold Deft, the task file and the\n" +
    "# output directory at the paths below; API keys come from the secret deft-api-keys; the\n" +
    "# image needs git and bash besides Deno (or use the compiled deft in any image with git).\n" +
    stringify(job);
}

// The deepest folder that holds Deft, the task file and the output directory.
function sharedRoot(request: K8sRequest): string {
  const paths = [request.tasksFile, request.out, request.deft[request.deft.length - 1]];
  let root = dirname(paths[0]);
  while (!paths.every((p) => p === root || p.startsWith(root === "/" ? "/" : `${root}/`))) {
    root = dirname(root);
  }
  return root;
}
