# Copyright 2024 The Flax Authors.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

from absl.testing import absltest
from absl.testing import parameterized
from flax import nnx
import jax
import jax.numpy as jnp
import numpy as np


class TestMetrics(parameterized.TestCase):

  def test_split_merge(self):
    logits = jnp.array(
      [[-1.0, 1.0], [-1.0, 1.0], [-1.0, 1.0], [1.0, -1.0], [1.0, -1.0]]
    )
    labels = jnp.array([1, 1, 1, 1, 1])
    logits2 = jnp.array(
      [[-1.0, 1.0], [-1.0, 1.0], [-1.0, 1.0], [1.0, -1.0], [1.0, -1.0]]
    )
    labels2 = jnp.array([1, 1, 1, 1, 0])

    accuracy = nnx.metrics.Accuracy()
    accuracy.update(logits=logits, labels=labels)
    graphdef, state = accuracy.split()
    accuracy = nnx.merge(graphdef, state)
    self.assertEqual(accuracy.compute(), 0.6)
    accuracy.update(logits=logits2, labels=labels2)
    self.assertEqual(accuracy.compute(), 0.7)

  def test_welford(self):
    values = jax.random.normal(jax.random.key(0), (5, 2))

    welford = nnx.metrics.Welford()
    welford.update(values=values)
    graphdef, state = welford.split()
    welford = nnx.merge(graphdef, state)
    expected = nnx.metrics.Statistics(
        mean=values.mean(),
        standard_deviation=values.std(),
        standard_error_of_mean=values.std() / jnp.sqrt(values.size),
    )
    computed = welford.compute()
    self.assertAlmostEqual(computed.mean, expected.mean, )
    self.assertAlmostEqual(computed.standard_deviation, expected.standard_deviation)
    self.assertAlmostEqual(
        computed.standard_error_of_mean, expected.standard_error_of_mean
    )

  def test_welford_large(self):
    values = jax.random.normal(jax.random.key(0), (5, 2)) + 1e16

    welford = nnx.metrics.Welford()
    welford.update(values=values)
    graphdef, state = welford.split()
    welford = nnx.merge(graphdef, state)
    expected = nnx.metrics.Statistics(
        mean=values.mean(),
        standard_deviation=values.std(),
        standard_error_of_mean=values.std() / jnp.sqrt(values.size),
    )
    computed = welford.compute()
    self.assertAlmostEqual(computed.mean, expected.mean)
    self.assertAlmostEqual(computed.standard_deviation, expected.standard_deviation)
    self.assertAlmostEqual(
        computed.standard_error_of_mean, expected.standard_error_of_mean
    )

  def test_welford_many(self):
    values = jax.random.normal(jax.random.key(0), (50_000,))

    welford = nnx.metrics.Welford()
    welford.update(values=values)
    graphdef, state = welford.split()
    welford = nnx.merge(graphdef, state)
    computed = welford.compute()
    self.assertAlmostEqual(
        computed.mean, 0.0, delta=3 * computed.standard_error_of_mean
    )
    self.assertAlmostEqual(computed.standard_deviation, 1.0, places=2)

  @parameterized.product(with_mask=[True, False])
  def test_multimetric(self, with_mask):
    logits = jnp.array(
      [[-1.0, 1.0], [-1.0, 1.0], [-1.0, 1.0], [1.0, -1.0], [1.0, -1.0]]
    )
    labels = jnp.array([1, 1, 0, 1, 0])
    mask = labels > 0 if with_mask else None
    logits2 = jnp.array(
      [[-1.0, 1.0], [-1.0, 1.0], [-1.0, 1.0], [1.0, -1.0], [1.0, -1.0]]
    )
    labels2 = jnp.array([0, 1, 1, 1, 1])
    mask2 = labels2 > 0 if with_mask else None
    batch_loss = jnp.array([1, 2, 3, 4])
    batch_loss2 = jnp.array([3, 2, 1, 0])
    loss_mask2 = batch_loss2 > 1 if with_mask else None

    metrics = nnx.MultiMetric(
        accuracy=nnx.metrics.Accuracy(), loss=nnx.metrics.Average()
    )
    values = metrics.compute()
    self.assertTrue(jnp.isnan(values['accuracy']))
    self.assertTrue(jnp.isnan(values['loss']))

    metrics.update(logits=logits, labels=labels, values=batch_loss, mask={"accuracy": mask})
    values = metrics.compute()
    self.assertEqual(values['accuracy'], 0.6 if not with_mask else 2 / 3)
    self.assertEqual(values['loss'], 2.5)

    metrics.update(logits=logits2, labels=labels2, values=batch_loss2, mask={"accuracy": mask2, "loss": loss_mask2})
    values = metrics.compute()
    self.assertEqual(values['accuracy'], 0.5 if not with_mask else (2 + 2) / (3 + 4))
    self.assertEqual(values['loss'], 2.0 if not with_mask else 15 / 6)

    metrics.reset()
    values = metrics.compute()
    self.assertTrue(jnp.isnan(values['accuracy']))
    self.assertTrue(jnp.isnan(values['loss']))

  @parameterized.product(with_mask=[True, False])
  def test_multimetric_with_custom_metric(self, with_mask):
    class CustomAccuracy(nnx.metrics.Accuracy):
      # we use unused values arg is on purpose instead of using **kwargs
      # to reproduce the error if mask arg is injected to the custom metric without mask arg
      def update(self, y_preds, y_true, values):
        super().update(logits=y_preds, labels=y_true)

    logits = jnp.array(
      [[-1.0, 1.0], [-1.0, 1.0], [-1.0, 1.0], [1.0, -1.0], [1.0, -1.0]]
    )
    labels = jnp.array([1, 1, 0, 1, 0])
    batch_loss = jnp.array([1, 2, 3, 4])
    mask = batch_loss > 1 if with_mask else None

    metrics = nnx.MultiMetric(
        accuracy=CustomAccuracy(), loss=nnx.metrics.Average()
    )
    metrics.update(y_preds=logits, y_true=labels, values=batch_loss, mask={"loss": mask})
    values = metrics.compute()
    self.assertEqual(values['accuracy'], 0.6)
    self.assertEqual(values['loss'], 3.0 if with_mask else 2.5)

  def test_binary_classification_accuracy(self):
    logits = jnp.array([0.4, 0.7, 0.2, 0.6])
    labels = jnp.array([0, 1, 1, 1])
    logits2 = jnp.array([0.1, 0.9, 0.8, 0.3])
    labels2 = jnp.array([0, 1, 1, 0])
    accuracy = nnx.metrics.Accuracy(threshold=0.5)
    accuracy.update(logits=logits, labels=labels)
    self.assertEqual(accuracy.compute(), 0.75)
    accuracy.update(logits=logits2, labels=labels2)
    self.assertEqual(accuracy.compute(), 0.875)

  @parameterized.parameters(
    {
      'logits': np.array([[[0.0, 0.0], [0.0, 0.0]], [[0.0, 0.0], [0.0, 0.0]]]),
      'labels': np.array([0, 0, 0, 0]),
      'threshold': None,
      'error_msg': 'For multi-class classification'
    },
    {
      'logits': np.array([0.0, 0.0, 0.0, 0.0]),
      'labels': np.array([[0, 0], [0, 0]]),
      'threshold': 0.5,
      'error_msg': 'For binary classification'
    }
  )
  def test_accuracy_dims(self, logits, labels, threshold, error_msg):
    accuracy = nnx.metrics.Accuracy(threshold=threshold)
    with self.assertRaisesRegex(ValueError, error_msg):
      accuracy.update(logits=logits, labels=labels)

  @parameterized.product(
    with_mask=[True, False],
    scalar_values=[True, False],
  )
  def test_average(self, with_mask, scalar_values):
    average = nnx.metrics.Average()
    value1 = 2 if scalar_values else jnp.arange(5 * 3, dtype=jnp.int32).reshape(5, 3)
    value2 = 3 if scalar_values else jnp.arange(5 * 3 * 4, dtype=jnp.float32).reshape(5, 3, 4)
    if with_mask:
      list_masks = [
        jnp.ones(5) if scalar_values else jnp.where(value1 > 4, 1.0, 0.0),
        jnp.ones(5) if scalar_values else value2 > 10,
      ]
    else:
      list_masks = [None, None]

    list_values = [value1, value2]

    for mask, values in zip(list_masks, list_values):
      if with_mask and scalar_values:
        with self.assertRaisesRegex(ValueError, "should be a jax array"):
          average.update(mask=mask, values=values)
      else:
          average.update(mask=mask, values=values)

    if with_mask and scalar_values:
      return

    self.assertEqual(
      average.count,
      (
        len(list_values) if scalar_values
        else sum(m.sum() for m in list_masks) if with_mask
        else sum(v.size for v in list_values)
      )
    )
    self.assertEqual(
      average.total,
      (
        sum(list_values) if scalar_values
        else sum((v * m).sum() for m, v in zip(list_masks, list_values)) if with_mask
        else sum(v.sum() for v in list_values)
      )
    )


if __name__ == '__main__':
  absltest.main()
