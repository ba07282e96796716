"""Classifier accuracy predictors: estimate the accuracy of the classifier's argmax predictions on an
unlabelled sample (one module per method or family; the registry scans every module of this
package)."""
