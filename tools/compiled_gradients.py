"""Compiled vs eager gradients of one step, per parameter: how many parameters get an all-zero gradient compiled
only, and the largest relative difference. usage: python tools/compiled_gradients.py cpu|cuda tiny|demo|full"""
import sys

import torch

from core.model.network import build, preset

dev, name = sys.argv[1], sys.argv[2]
torch.manual_seed(0)
m = build(preset(name, 4)).to(dev)
x = torch.randn(1, 1, 256, 1024, device=dev)
for dt in (torch.bfloat16, torch.float32):
    def run(net):
        m.zero_grad(set_to_none=True)
        with torch.autocast(dev, dtype=dt, enabled=dt != torch.float32):
            out = net(x)
        out.float().square().mean().backward()
        return {n: p.grad.detach().float().clone() for n, p in m.named_parameters()}
    e, c = run(m), run(torch.compile(m))
    zero = [n for n in c if bool((c[n] == 0).all()) and not bool((e[n] == 0).all())]
    rel = max(float((c[n] - e[n]).norm() / e[n].norm().clamp_min(1e-30)) for n in e)
    print(f"gradcheck {dev} {name} {dt}: {len(zero)}/{len(e)} params all-zero compiled only {zero[:4]}; "
          f"max relative grad difference {rel:.3g}")
    torch._dynamo.reset()
