// What a task declares about the evidence its training must leave (tasks.json `verify`). Every
// field is optional: the verifier reads the rest from the unbroken original (the model id it loads,
// the dataset, where it saves), so a user's script gets a check without hand-tuning; a task adds a
// field where the original's literals do not say (a custom PyTorch model, an unusual column).
import { z } from 'zod';

const Relative = z
  .string()
  .min(1)
  .max(300)
  .refine((p) => !p.startsWith('/') && !p.split('/').includes('..'), 'a path inside the run folder');

/** The model heads the verifier knows. */
export const VerifyHeadSchema = z.enum(['seqcls', 'tokcls', 'qa', 'causal', 'seq2seq', 'imgcls', 'mlm', 'vlm', 'ctc']);

export const VerifySpecSchema = z
  .object({
    /** The artifact, relative to the run folder (`*` allowed: the highest-numbered match wins). Default: what the original saves. */
    artifact: Relative.optional(),
    /** `hf_model`: a save_pretrained folder (or a PEFT adapter); `state_dict`: a torch.save file. Default: by what the artifact is. */
    kind: z.enum(['hf_model', 'state_dict']).optional(),
    /** The model head (default: from the original's `AutoModelFor…` call). */
    head: VerifyHeadSchema.optional(),
    /** The hub id the untrained model comes from (default: the original's `from_pretrained` id). */
    base_model: z.string().min(1).max(200).optional(),
    /** `load_dataset` arguments of the held-out data (default: the original's). */
    dataset: z.array(z.string().min(1).max(200)).min(1).max(3).optional(),
    split: z.string().min(1).max(50).optional(),
    text: z.union([z.string().min(1), z.array(z.string().min(1)).min(1).max(2)]).optional(),
    label: z.string().min(1).optional(),
    image: z.string().min(1).optional(),
    /** Prepended to seq2seq sources (T5's `summarize: `). */
    prefix: z.string().max(100).optional(),
    /** state_dict: a Python expression building the untrained model (evaluated with `heldout`'s names in scope). */
    model: z.string().min(1).max(2_000).optional(),
    /** state_dict: Python code defining `batches()` (yields `(x, y)`) and `loss_fn`: the task's held-out data. */
    heldout: z.string().min(1).max(20_000).optional(),
    /**
     * How much better than the untrained model the trained one must be on held-out data, as a share
     * of the untrained loss: (untrained − trained) / untrained ≥ margin.
     */
    margin: z.number().min(0).max(1).default(0.02),
    /**
     * How far from the unbroken original's held-out loss a repair's may be, as a share of the
     * original's own improvement over the untrained model (both sides: a model far better than the
     * original's training can reach is no more plausible than one far worse).
     */
    tolerance: z.number().min(0).max(10).default(0.5),
  })
  .strict();
export type VerifySpec = z.infer<typeof VerifySpecSchema>;
export type VerifySpecInput = z.input<typeof VerifySpecSchema>;
