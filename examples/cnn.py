"""A small convolutional network on random MNIST-shaped data: conv -> relu -> max pool ->
conv -> relu -> average pool -> dense, trained with a jitted SGD step, then per-example
gradients with vmap(grad), checked against a loop of single-example gradients."""
import numpy as np

import funcgraph as fg
import funcgraph.numpy as fnp
from funcgraph import lax, nn, random

LAYOUT = ("NHWC", "HWIO", "NHWC")


def init_params(key):
    k1, k2, k3 = random.split(key, 3)
    return {"conv1": random.normal(k1, (3, 3, 1, 8)) * 0.3,
            "conv2": random.normal(k2, (3, 3, 8, 16)) * 0.1,
            "dense": random.normal(k3, (7 * 7 * 16, 10)) * 0.05}


def predict(params, images):
    h = lax.conv_general_dilated(images, params["conv1"], (1, 1), "SAME",
                                 dimension_numbers=LAYOUT)
    h = nn.relu(h)
    h = lax.reduce_window(h, -fnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    h = lax.conv_general_dilated(h, params["conv2"], (1, 1), "SAME", dimension_numbers=LAYOUT)
    h = nn.relu(h)
    h = lax.reduce_window(h, 0.0, lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID") / 4.0
    return h.reshape(h.shape[0], -1) @ params["dense"]


def loss_fn(params, images, labels):
    logits = predict(params, images)
    return -fnp.mean(fnp.sum(nn.log_softmax(logits) * nn.one_hot(labels, 10), axis=-1))


@fg.jit
def sgd_step(params, images, labels):
    loss, grads = fg.value_and_grad(loss_fn)(params, images, labels)
    return fg.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads), loss


def main():
    key = random.PRNGKey(0)
    k_params, k_images, k_labels = random.split(key, 3)
    params = init_params(k_params)
    images = random.normal(k_images, (32, 28, 28, 1))
    labels = random.randint(k_labels, (32,), 0, 10)

    losses = []
    for step in range(8):
        params, loss = sgd_step(params, images, labels)
        losses.append(float(loss))
        print(f"step {step}: loss {losses[-1]:.4f}")
    assert losses[-1] < losses[0], losses

    def example_loss(params, image, label):
        return loss_fn(params, image[None], label[None])

    per_example = fg.jit(fg.vmap(fg.grad(example_loss), in_axes=(None, 0, 0)))
    grads = per_example(params, images, labels)
    print("per-example gradient shapes:",
          {name: g.shape for name, g in grads.items()})
    for i in range(3):
        single = fg.grad(example_loss)(params, images[i], labels[i])
        for name in params:
            np.testing.assert_allclose(np.asarray(grads[name])[i], np.asarray(single[name]),
                                       rtol=1e-4, atol=1e-5)
    print("per-example gradients match single-example gradients")


if __name__ == "__main__":
    main()
