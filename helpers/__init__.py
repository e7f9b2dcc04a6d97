"""helpers: the shared code of the course "Attention, step by step".

Each notebook builds a piece inline, checks it equal to the version here (and to PyTorch's),
then imports it from here. Modules:

- ``attention``: scaled_dot_product_attention, fused_scaled_dot_product_attention, causal_mask,
  padding_mask, MultiHeadAttention
- ``layers``: PositionalEncoding, FeedForward, EncoderLayer, DecoderLayer
- ``transformer``: Transformer (with attention_maps)
- ``seq2seq``: Seq2SeqTransformer, a token-level model around Transformer
- ``rnn``: GRUSeq2Seq, the fixed-context and cross-attention GRU models of notebook 01
- ``tasks``: the 4x6 toy matrix, seeded copy/reverse tasks, synthetic stroke images
- ``training``: training loop with a progress bar, greedy decoding, accuracy
- ``plotting`` / ``widgets``: heatmaps with tokens on both axes, head grids, live figures
- ``diagrams``: the Transformer's architecture figure and the "you are here" strips
- ``checks``: exercise checkers with hints, each known mistake with an id
- ``record``: the learner's progress record (one JSON line per check; COURSE_RECORD=off turns it off)
- ``classroom``: ``python -m helpers.classroom report SUBMISSIONS --out DIR``, the teacher's class report
- ``pretrained``: all-MiniLM-L6-v2's weights in the course's own encoder layers (real attention heads)
- ``course``: the course map, the edition (COURSE_LANG) and ``say(en, zh)``
- ``reproducibility``: seed_everything, set_print_options
- ``validation``: the argument checks behind every ValueError / TypeError
"""

__version__ = "0.1.0"
