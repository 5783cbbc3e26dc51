// A task's runtime shims (tasks.json `runtime.shims`): environment code that adapts a script's GPU
// assumptions to this machine's CPU without editing the script (resources/shims/_forgeenv_shims.py
// says exactly what each one replaces). make-task records them when a run failed on a GPU
// assumption the script makes in its code; the executor then loads them into every run of the task
// (original, broken, repair, verifier; cold and warm alike) and into nothing else. Real mode only:
// the simulated stand-ins have no CUDA to adapt.
import { z } from 'zod';

export const RUNTIME_SHIMS = [
  'cuda-to-cpu',
  'no-quantization',
  'no-mixed-precision',
  'trained-model-evidence',
  'no-hub-push',
  'offline-hub-queries',
  'offline-hub-files',
] as const;
export const RuntimeShimSchema = z.enum(RUNTIME_SHIMS);
export type RuntimeShim = z.infer<typeof RuntimeShimSchema>;

/** What a shim replaces, in words (adaptation records, docs). */
export const SHIM_EFFECTS: Record<RuntimeShim, string> = {
  'cuda-to-cpu':
    '.cuda()/.to(<CUDA device>) keep tensors and modules on the CPU, from_pretrained(device_map=<CUDA device or "auto">) loads onto the CPU, torch.cuda queries (get_device_capability, mem_get_info, set_device, peak-memory resets, …) answer for the CPU',
  'no-quantization':
    "bitsandbytes 8-/4-bit quantization on load is dropped (the model loads in float32), and the script's own `import bitsandbytes` gets a CPU stand-in (torch optimizers for bnb.optim.*8bit, torch.nn.Linear for bnb.nn.Linear8bitLt/Linear4bit)",
  'no-mixed-precision':
    'fp16/bf16/tf32 set in the script\'s code (TrainingArguments, Accelerator(mixed_precision="fp16")) train in float32',
  'trained-model-evidence':
    "the script saves no model: the model whose parameters its optimizer trained is saved at exit into the run folder's .forgeenv-evidence/model (save_pretrained) for the verifier",
  'no-hub-push':
    "Hub uploads send nothing and are recorded on stderr (huggingface_hub's create_repo, create_commit, upload_file, upload_folder, whoami …, their arguments bound to the release's signature); push_to_hub itself runs as the release has it and saves locally",
  'offline-hub-queries':
    "huggingface_hub's file_exists, which raises offline, answers from the local hub cache (True when the file is cached) when HF_HUB_OFFLINE is set, its arguments bound to the release's signature",
  'offline-hub-files':
    'a hub file URL (https://huggingface.co/[datasets/|spaces/]<repo>/resolve/<revision>/<path>) fetched with requests or urllib (by the script, or a library it hands the URL to) is answered from the local hub cache, which holds a synthetic file of the kind its extension names; any other URL goes to the network as shipped',
};

/** Where the trained-model-evidence shim saves the trained model, relative to the run folder (resources/shims/_forgeenv_evidence.py). */
export const EVIDENCE_ARTIFACT = '.forgeenv-evidence/model';

export const TaskRuntimeSchema = z
  .object({
    /** Loaded into every real-mode run of the task, in this order. */
    shims: z
      .array(RuntimeShimSchema)
      .min(1)
      .max(RUNTIME_SHIMS.length)
      .refine((s) => new Set(s).size === s.length, 'each shim once'),
  })
  .strict();
export type TaskRuntime = z.infer<typeof TaskRuntimeSchema>;

/** The variable sitecustomize.py reads: the run's shims, comma-separated. Owned by the executor. */
export const SHIMS_ENV = 'FORGEENV_SHIMS';

/** A runtime with `shim` added (unchanged when it is there already). */
export function withShim(runtime: TaskRuntime | undefined, shim: RuntimeShim): TaskRuntime {
  const shims = runtime?.shims ?? [];
  return { shims: shims.includes(shim) ? [...shims] : [...shims, shim] };
}
