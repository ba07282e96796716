"""Language-model stage of the covariate-shift experiments: head-only fine-tuning and extraction."""
