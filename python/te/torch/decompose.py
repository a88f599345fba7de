"""Decompositions of composite aten operators into ones te computes (added to AOTAutograd's
table by the backend).

aten._transformer_encoder_layer_fwd is what nn.TransformerEncoderLayer calls in eval mode
without autograd (PyTorch's "fast path"): one opaque operator, rewritten here as the layer it
stands for — the attention (its in-projection, scaled_dot_product_attention, out-projection),
the feed-forward block and the two layer norms, in the layer's norm_first order — so that te
sees its matrix products and norms instead of falling back for the whole layer.
"""
import torch
import torch.nn.functional as F

aten = torch.ops.aten


def _encoder_layer(src, embed_dim, num_heads, qkv_weight, qkv_bias, proj_weight, proj_bias,
                   use_gelu, norm_first, eps, norm_weight_1, norm_bias_1, norm_weight_2,
                   norm_bias_2, ffn_weight_1, ffn_bias_1, ffn_weight_2, ffn_bias_2, mask=None,
                   mask_type=None):
    if mask is not None or src.dim() != 3:
        return NotImplemented
    b, t, e = src.shape          # the fast path is batch_first
    h = int(num_heads)

    def attention(x):
        qkv = F.linear(x, qkv_weight, qkv_bias).view(b, t, 3, h, e // h).permute(2, 0, 3, 1, 4)
        out = F.scaled_dot_product_attention(qkv[0], qkv[1], qkv[2])
        return F.linear(out.transpose(1, 2).reshape(b, t, e), proj_weight, proj_bias)

    def feed_forward(x):
        y = F.linear(x, ffn_weight_1, ffn_bias_1)
        y = F.gelu(y) if use_gelu else F.relu(y)
        return F.linear(y, ffn_weight_2, ffn_bias_2)

    def norm(x, w, bias):
        return F.layer_norm(x, (e,), w, bias, eps)
    if norm_first:
        x = src + attention(norm(src, norm_weight_1, norm_bias_1))
        return x + feed_forward(norm(x, norm_weight_2, norm_bias_2))
    x = norm(src + attention(src), norm_weight_1, norm_bias_1)
    return norm(x + feed_forward(x), norm_weight_2, norm_bias_2)


TABLE = {aten._transformer_encoder_layer_fwd.default: _encoder_layer}
