"""GRPO+ training: advantages, losses, policy update, DeepSpeed, checkpoints, logging.

Knows rollouts (token ids, sampler log-probs, rewards, groups, roles), not prompts or execution;
imports nothing else of this project. Modules (import what you need; nothing heavy is imported
here):

* :mod:`training.rollout`     ``Rollout``, one sampled completion with its reward and GRPO group
* :mod:`training.config`      ``GRPOConfig`` (loss-type presets, update, engine) with ``validate()``
* :mod:`training.advantages`  group-relative advantages (numpy)
* :mod:`training.losses`      clipped surrogate loss, aggregations, token log-probs (torch)
* :mod:`training.batch`       padding layout and micro-batch planning
* :mod:`training.trainer`     ``PolicyTrainer``: the update (plain PyTorch or a DeepSpeed engine)
* :mod:`training.distributed` rank/world helpers, DeepSpeed init on CPU (gloo) or GPU (nccl)
* :mod:`training.checkpoint`  atomic checkpoints (model, optimizer, RNG, caller state, step)
* :mod:`training.metrics_file`     ``MetricsLogger``: metrics.jsonl exactly once per step, TensorBoard, tqdm
* :mod:`training.runner`      ``ResumableRun`` / ``run_loop``: a resumable run (restore -> step -> log -> checkpoint)
* :mod:`training.plot`        ``plot_metrics``: curves to PNG (``coevo plot``)
"""
