"""The code blocks the issues show run as written."""

from __future__ import annotations


def test_the_dlarray_functions_and_custom_training_loop_example():
    import torch

    import dlformat as dlf

    X = dlf.dlarray(torch.randn(8, 4, 10), "CBT")
    assert dlf.dims(X[:, 0:2, :]) == "CBT" and tuple(X[:, 0:2, :].shape) == (8, 2, 10)
    S = dlf.sum(X, "T")  # MATLAB: sum(X, finddim(X, "T"))
    assert dlf.dims(S) == "CBT" and tuple(S.shape) == (8, 4, 1)
    Y = dlf.exp(X) * (X > 0) + X**2  # elementwise math keeps the format
    assert dlf.dims(Y) == "CBT"
    x = dlf.stripdims(X)
    torch.testing.assert_close(dlf.stripdims(Y), torch.exp(x) * (x > 0) + x**2)
    torch.testing.assert_close(dlf.stripdims(S), x.sum(2, keepdim=True))
    (position,) = dlf.finddim(X, "T")  # finddim is 0-based; MATLAB's dimension numbers start at 1
    torch.testing.assert_close(dlf.stripdims(dlf.sum(X, position + 1)), dlf.stripdims(S))
    net = dlf.dlnetwork([dlf.sequenceInputLayer(8), dlf.fullyConnectedLayer(3), dlf.softmaxLayer()])
    T = dlf.dlarray(torch.nn.functional.one_hot(torch.randint(0, 3, (4, 10)), 3).permute(2, 0, 1).float(), "CBT")

    def model_loss(net, X, T):
        Y = dlf.forward(net, X)
        loss = dlf.crossentropy(Y, T)
        return loss, dlf.dlgradient(loss, net.Learnables)

    loss, grads = dlf.dlfeval(model_loss, net, X, T)
    assert dlf.extractdata(loss).numel() == 1 and float(dlf.extractdata(loss)) > 0
    avg, avg_sq = [], []
    before = net.Layers[1].Weights.detach().clone()
    net, avg, avg_sq = dlf.adamupdate(net, grads, avg, avg_sq, 1)
    assert not torch.equal(net.Layers[1].Weights.detach(), before)
