"""trainingOptions("lm") and trainnet with it: full-batch Levenberg–Marquardt whose iterates equal a
float64 NumPy transcription of MathWorks' LM iteration (the trainlm page's Algorithms section:
δ = −(JᵀJ + μI) \\ JᵀE, μ raised by DampingIncreaseFactor until the loss falls, then lowered by
DampingDecreaseFactor; stop once μ exceeds MaxDampingFactor), with an analytic Jacobian; the stop
reasons; the options (MathWorks' TrainingOptionsLM page) and what the solver refuses."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import dlformat as dlf
from dlformat import DLFormatError

rng = np.random.default_rng(5)
X = rng.standard_normal((10, 2))  # N×C, featureInputLayer's layout
T = np.sin(X @ np.array([[1.2], [-0.7]])) + 0.1 * rng.standard_normal((10, 1))


def mlp(seed=1, hidden=3, scale=1.0):
    """fc (2 → hidden), tanh, fc (hidden → 1), in float64."""
    torch.manual_seed(seed)
    layers = [
        dlf.featureInputLayer(2),
        dlf.fullyConnectedLayer(hidden),
        dlf.tanhLayer(),
        dlf.fullyConnectedLayer(1),
    ]
    net = dlf.dlnetwork(layers).to(torch.float64)
    with torch.no_grad():
        for _, _, value in net.Learnables:
            value.mul_(scale)
    return net


def linear():
    torch.manual_seed(2)
    return dlf.dlnetwork([dlf.featureInputLayer(2), dlf.fullyConnectedLayer(1)]).to(torch.float64)


def unpacked(net):
    """The learnables as one float64 vector (in the network's order) and the layout to split it."""
    values = [value.detach().numpy() for _, _, value in net.Learnables]
    return np.concatenate([v.ravel() for v in values]), [v.shape for v in values]


def split(theta, shapes):
    parts, offset = [], 0
    for shape in shapes:
        size = int(np.prod(shape))
        parts.append(theta[offset : offset + size].reshape(shape))
        offset += size
    return parts


def mlp_errors_and_jacobian(theta, shapes):
    """E = Y − T per observation for y = W2·tanh(W1·x + b1) + b2, and ∂E/∂θ written out by hand."""
    W1, b1, W2, b2 = split(theta, shapes)
    H = np.tanh(X @ W1.T + b1.ravel())  # N×hidden
    E = H @ W2.ravel() + b2.ravel()[0] - T[:, 0]
    slope = (1 - H**2) * W2.ravel()  # ∂y/∂(W1·x + b1), N×hidden
    dW1 = slope[:, :, None] * X[:, None, :]  # N×hidden×2, W1 stored hidden×2 (row-major)
    J = np.hstack([dW1.reshape(len(X), -1), slope, H, np.ones((len(X), 1))])
    return E, J


def linear_errors_and_jacobian(theta, shapes):
    W, b = split(theta, shapes)
    return X @ W.ravel() + b.ravel()[0] - T[:, 0], np.hstack([X, np.ones((len(X), 1))])


def numpy_lm(model, theta, shapes, iterations, mu=1e-3, mu_max=1e10, inc=10.0, dec=0.1):
    """MathWorks' LM iteration on loss = mean(E²) (trainnet's "mse"): the iterates, the damping
    each accepted step was solved with, the number of rejected trials, and whether μ ran out."""
    thetas, used, rejected = [], [], 0
    for _ in range(iterations):
        E, J = model(theta, shapes)
        loss = np.mean(E**2)
        while mu <= mu_max:
            step = np.linalg.solve(J.T @ J + mu * np.eye(len(theta)), -J.T @ E)
            if np.mean(model(theta + step, shapes)[0] ** 2) < loss:
                theta = theta + step
                used.append(mu)
                mu *= dec
                break
            rejected += 1
            mu *= inc
        else:
            return thetas, used, rejected, True
        thetas.append(theta)
    return thetas, used, rejected, False


def losses_of(info):
    return np.array([row[1] for row in info.TrainingHistory.rows])


def test_the_iterates_equal_the_reference_with_rejected_steps():
    # large initial weights: some Gauss-Newton steps overshoot and are rejected, so the damping
    # rises within an iteration before the step is taken (the reference counts the rejections)
    net = mlp(seed=4, scale=3.0)
    theta, shapes = unpacked(net)
    expected, used, rejected, ran_out = numpy_lm(mlp_errors_and_jacobian, theta, shapes, 12)
    assert rejected > 0 and not ran_out and max(used) > 1e-3
    options = dlf.trainingOptions(
        "lm", MaxIterations=12, Verbose=False, GradientTolerance=1e-12, StepTolerance=1e-12
    )
    trained, info = dlf.trainnet(X, T, net, "mse", options)
    np.testing.assert_allclose(
        losses_of(info), [np.mean(mlp_errors_and_jacobian(t, shapes)[0] ** 2) for t in expected], rtol=1e-9
    )
    np.testing.assert_allclose(unpacked(trained)[0], expected[-1], rtol=1e-9, atol=1e-12)
    steps = [np.linalg.norm(b - a) for a, b in zip([theta, *expected[:-1]], expected, strict=True)]
    np.testing.assert_allclose([row[3] for row in info.TrainingHistory.rows], steps, rtol=1e-8)
    assert info.TrainingHistory.columns == ("Iteration", "Loss", "GradientNorm", "StepNorm")
    assert info.StopReason == "Max iterations completed" and info.OutputNetworkIteration == 12
    np.testing.assert_array_equal(unpacked(net)[0], theta)  # the given network is left as it was


def test_a_linear_least_squares_problem_is_solved_in_one_step_with_small_damping():
    net = linear()
    options = dlf.trainingOptions("lm", InitialDampingFactor=1e-12, Verbose=False)
    trained, info = dlf.trainnet(X, T, net, "mse", options)
    solution, *_ = np.linalg.lstsq(np.hstack([X, np.ones((10, 1))]), T[:, 0], rcond=None)
    np.testing.assert_allclose(unpacked(trained)[0], solution, rtol=1e-9)
    # the gradient at the solution is 0 up to rounding: training stops after that one step
    assert info.StopReason == "Met gradient tolerance" and len(info.TrainingHistory) == 1
    theta, shapes = unpacked(net)
    (expected,), *_ = numpy_lm(linear_errors_and_jacobian, theta, shapes, 1, mu=1e-12)
    np.testing.assert_allclose(unpacked(trained)[0], expected, rtol=1e-12)


def test_the_damping_schedule_follows_the_options():
    net = mlp(seed=4, scale=3.0)
    theta, shapes = unpacked(net)
    factors = {"mu": 0.5, "inc": 3.0, "dec": 0.5}
    expected, _, rejected, _ = numpy_lm(mlp_errors_and_jacobian, theta, shapes, 6, **factors)
    assert rejected > 0
    options = dlf.trainingOptions(
        "lm", MaxIterations=6, InitialDampingFactor=0.5, DampingIncreaseFactor=3, DampingDecreaseFactor=0.5,
        Verbose=False, GradientTolerance=1e-12, StepTolerance=1e-12,
    )  # fmt: skip
    trained, _ = dlf.trainnet(X, T, net, "mse", options)
    np.testing.assert_allclose(unpacked(trained)[0], expected[-1], rtol=1e-9, atol=1e-12)


def test_training_stops_once_the_damping_passes_its_maximum():
    # with the maximum below the damping a rejected step needs, μ runs out: the learnables stay
    # at the last accepted point
    net = mlp(seed=4, scale=3.0)
    theta, shapes = unpacked(net)
    expected, _, _, ran_out = numpy_lm(mlp_errors_and_jacobian, theta, shapes, 50, mu_max=1e-2)
    assert ran_out and len(expected) < 50
    options = dlf.trainingOptions(
        "lm", MaxDampingFactor=1e-2, Verbose=False, GradientTolerance=1e-12, StepTolerance=1e-12
    )
    trained, info = dlf.trainnet(X, T, net, "mse", options)
    assert info.StopReason == "Max damping factor reached"
    assert len(info.TrainingHistory) == len(expected) + 1 and info.TrainingHistory.rows[-1][3] == 0
    np.testing.assert_allclose(unpacked(trained)[0], expected[-1], rtol=1e-9, atol=1e-12)


def test_an_initial_damping_above_the_maximum_takes_no_step():
    net = linear()
    options = dlf.trainingOptions("lm", InitialDampingFactor=1, MaxDampingFactor=0.5, Verbose=False)
    trained, info = dlf.trainnet(X, T, net, "mse", options)
    assert info.StopReason == "Max damping factor reached" and len(info.TrainingHistory) == 1
    np.testing.assert_array_equal(unpacked(trained)[0], unpacked(net)[0])


def test_the_step_tolerance_validation_and_the_verbose_table(capsys):
    options = dlf.trainingOptions(
        "lm", StepTolerance=1e-2, GradientTolerance=1e-12, ValidationData=(X[:4], T[:4]), ValidationFrequency=2,
        Metrics="rmse", VerboseFrequency=1,
    )  # fmt: skip
    _, info = dlf.trainnet(X, T, mlp(), "mse", options)
    assert info.StopReason == "Met step tolerance" and info.TrainingHistory.rows[-1][-1] <= 1e-2
    assert all(row[-1] > 1e-2 for row in info.TrainingHistory.rows[:-1])
    assert info.TrainingHistory.columns == ("Iteration", "Loss", "RMSE", "GradientNorm", "StepNorm")
    assert info.ValidationHistory.rows[0][0] == 1 and info.ValidationHistory.rows[-1][0] == len(
        info.TrainingHistory
    )
    losses = losses_of(info)
    assert np.all(np.diff(losses) < 0)  # every iteration takes a step that lowers the loss
    printed = capsys.readouterr().out
    assert "GradientNorm" in printed and "ValidationLoss" in printed
    assert printed.strip().endswith("Training stopped: Met step tolerance")


def test_a_start_at_the_minimum_meets_the_gradient_tolerance():
    net = linear()
    fitted = dlf.extractdata(dlf.predict(net, dlf.dlarray(torch.tensor(X), "BC"))).numpy().T
    _, info = dlf.trainnet(X, fitted, net, "mse", dlf.trainingOptions("lm", Verbose=False))
    assert info.StopReason == "Met gradient tolerance" and len(info.TrainingHistory) == 1
    assert info.TrainingHistory.rows[0][1] == 0 and info.TrainingHistory.rows[0][3] == 0


def test_float32_networks_train_and_output_functions_stop_them():
    calls = []

    def stop_at_two(info):
        calls.append(info["State"])
        return info["State"] == "iteration" and info["Iteration"] == 2

    torch.manual_seed(0)
    layers = [
        dlf.featureInputLayer(2),
        dlf.fullyConnectedLayer(3),
        dlf.tanhLayer(),
        dlf.fullyConnectedLayer(1),
    ]
    options = dlf.trainingOptions("lm", Verbose=False, OutputFcn=stop_at_two)
    trained, info = dlf.trainnet(X.astype(np.float32), T.astype(np.float32), layers, "mse", options)
    assert info.StopReason == "Stopped by OutputFcn" and calls == ["start", "iteration", "iteration", "done"]
    assert all(value.dtype == torch.float32 for _, _, value in trained.Learnables)
    assert losses_of(info)[1] < losses_of(info)[0]


def test_the_options():
    options = dlf.trainingOptions("lm")
    assert options.matlab_class == "TrainingOptionsLM"
    assert (options.MaxIterations, options.InitialDampingFactor, options.MaxDampingFactor) == (
        1000,
        0.001,
        1e10,
    )
    assert (options.DampingIncreaseFactor, options.DampingDecreaseFactor) == (10, 0.1)
    assert (options.GradientTolerance, options.StepTolerance) == (1e-5, 1e-5)
    shown = repr(options)
    assert shown.splitlines()[0] == "  TrainingOptionsLM with properties:"
    assert "MaxDampingFactor: 1.0000e+10" in shown and "DampingDecreaseFactor: 0.1000" in shown
    assert "MiniBatchSize" not in shown and "InitialLearnRate" not in shown
    order = [line.split(":")[0].strip() for line in shown.splitlines()[2:9]]
    assert order == [
        "MaxIterations", "InitialDampingFactor", "MaxDampingFactor", "DampingIncreaseFactor",
        "DampingDecreaseFactor", "GradientTolerance", "StepTolerance",
    ]  # fmt: skip
    same = dlf.trainingOptions("lm", "InitialDampingFactor", 0.002, dampingincreasefactor=12)
    assert (same.InitialDampingFactor, same.DampingIncreaseFactor) == (0.002, 12)
    assert dlf.TrainingOptions.from_config(same.get_config()) == same


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"MiniBatchSize": 32}, "'MiniBatchSize' is not an option for solver 'lm'"),
        ({"InitialLearnRate": 0.1}, "'InitialLearnRate' is not an option for solver 'lm'"),
        ({"LineSearchMethod": "weak-wolfe"}, "'LineSearchMethod' is not an option for solver 'lm'"),
        ({"DampingIncreaseFactor": 1}, "DampingIncreaseFactor must be a finite number greater than 1"),
        ({"DampingDecreaseFactor": 1}, r"DampingDecreaseFactor must be a number in \(0, 1\)"),
        ({"DampingDecreaseFactor": 0}, r"DampingDecreaseFactor must be a number in \(0, 1\)"),
        ({"InitialDampingFactor": 0}, "InitialDampingFactor must be a positive number"),
        ({"MaxDampingFactor": float("inf")}, "MaxDampingFactor must be a positive number"),
        ({"GradientTolerance": -1}, "GradientTolerance must be a positive number"),
        ({"MaxIterations": 2.5}, "MaxIterations must be a positive integer"),
    ],
)
def test_bad_options(options, message):
    with pytest.raises(DLFormatError, match=message):
        dlf.trainingOptions("lm", **options)


@pytest.mark.parametrize(
    ("loss", "message"),
    [
        ("crossentropy", 'the "lm" solver trains regression networks on the squared errors'),
        ("l1loss", 'lossFcn must be\\s+"mse"'),
        (lambda Y, T: dlf.l2loss(Y, T), 'lossFcn must be\\s+"mse"'),
    ],
)
def test_lm_takes_only_the_squared_error_loss(loss, message):
    with pytest.raises(DLFormatError, match=message):
        dlf.trainnet(X, T, linear(), loss, dlf.trainingOptions("lm", Verbose=False))


@pytest.mark.parametrize("name", ["mse", "mean-squared-error", "l2loss"])
def test_the_names_of_the_squared_error_loss(name):
    _, info = dlf.trainnet(X, T, linear(), name, dlf.trainingOptions("lm", MaxIterations=1, Verbose=False))
    assert len(info.TrainingHistory) == 1


def test_lm_refuses_what_it_cannot_do():
    layers = [dlf.featureInputLayer(2), dlf.fullyConnectedLayer(1), dlf.regressionLayer()]
    with pytest.raises(DLFormatError, match='trainNetwork does not train with the "lm" solver'):
        dlf.trainNetwork(X, T, layers, dlf.trainingOptions("lm", Verbose=False))
    options = dlf.trainingOptions("lm", Verbose=False, ExecutionEnvironment="parallel")
    with pytest.raises(DLFormatError, match='the "lm" solver trains in one process'):
        dlf.trainnet(X, T, linear(), "mse", options)
    layers = [dlf.featureInputLayer(2), dlf.fullyConnectedLayer(1, WeightLearnRateFactor=2)]
    with pytest.raises(DLFormatError, match=r"learn-rate factors other than 1 \(fc/Weights\)"):
        dlf.trainnet(X, T, layers, "mse", dlf.trainingOptions("lm", Verbose=False))


@pytest.mark.parametrize("how", ["one block", "blocks of two rows", "one backward pass per error"])
def test_the_jacobian_of_the_errors(how, monkeypatch):
    from dlformat.training import _lm_training

    if how == "blocks of two rows":
        monkeypatch.setattr(_lm_training, "_SEED_NUMBERS", 2 * len(X))
    if how == "one backward pass per error":  # as when an operation cannot be batched by vmap
        grad = torch.autograd.grad

        def unbatched(*args, **kwargs):
            if kwargs.get("is_grads_batched"):
                raise RuntimeError("vmap: not batchable")
            return grad(*args, **kwargs)

        monkeypatch.setattr(torch.autograd, "grad", unbatched)
    net = mlp(seed=3)
    parameters = [value for _, _, value in net.Learnables]
    Y = net(dlf.dlarray(torch.tensor(X.T), "CB"), training=True)
    errors = Y._data - torch.tensor(T.T)
    J = _lm_training._jacobian(errors, parameters)
    np.testing.assert_allclose(J.detach().numpy(), mlp_errors_and_jacobian(*unpacked(net))[1], rtol=1e-12)


@pytest.mark.parametrize("solver", ["lbfgs", "lm"])
def test_batch_normalization_statistics_are_updated_once_per_accepted_step(solver):
    # the layer sits on the input, so its batch statistics are the input's: after k accepted steps
    # MATLAB's running mean φ·x̄ + (1 − φ)·previous from 0 is (1 − 0.9^k)·x̄ (MeanDecay φ = 0.1),
    # however many trial points the line search or the damping took (trial points are not kept)
    torch.manual_seed(1)
    layers = [dlf.featureInputLayer(2), dlf.batchNormalizationLayer(), dlf.fullyConnectedLayer(1)]
    options = dlf.trainingOptions(
        solver, MaxIterations=3, Verbose=False, GradientTolerance=1e-12, StepTolerance=1e-12
    )
    trained, info = dlf.trainnet(X, T, dlf.dlnetwork(layers).to(torch.float64), "mse", options)
    assert info.StopReason == "Max iterations completed" and all(
        row[3] > 0 for row in info.TrainingHistory.rows
    )
    mean = dict(((layer, name), value) for layer, name, value in trained.State)[("batchnorm", "TrainedMean")]
    np.testing.assert_allclose(mean.numpy().ravel(), (1 - 0.9**3) * X.mean(0), rtol=1e-12)
